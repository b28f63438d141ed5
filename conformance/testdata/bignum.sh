#!/bin/sh
# A stream call whose context holds a number out of float64's range.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"bignum","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"call":{"kind":"stream","data":{"model":{"id":"faux-1","api":"faux","provider":"faux"},"messages":[],"thinkingLevel":"off","apiKey":"","x":1e400}}}'
read -r answer
printf '%s\n' "$answer" >&2
printf '%s\n' '{"type":"idle","session":1}'
while read -r line; do
  case "$line" in
    *'"type":"stop"'*) printf '%s\n' '{"type":"stopped","session":1}' ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '%s\n' '{"type":"idle","session":1}' ;;
  esac
done
