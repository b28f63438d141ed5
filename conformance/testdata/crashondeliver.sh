#!/bin/sh
# Takes deliveries ahead; an event, a stream call, then idle; exits on any delivery.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"cod","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"],"deliveriesAhead":true}}'
read -r start
printf '%s\n' '{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"agent_start"}}}'
printf '%s\n' '{"type":"call","id":1,"session":1,"call":{"kind":"stream","data":{"model":{"id":"faux-1","api":"faux","provider":"faux"},"messages":[],"thinkingLevel":"off","apiKey":""}}}'
read -r answer
printf '%s\n' '{"type":"idle","session":1}'
while read -r line; do
  case "$line" in
    *'"type":"deliver"'*) echo "crash on delivery" >&2; exit 3 ;;
    *'"type":"stop"'*) printf '%s\n' '{"type":"stopped","session":1}' ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '%s\n' '{"type":"idle","session":1}' ;;
  esac
done
