#!/bin/sh
# Takes standing answers and marks a steering poll standing whose data holds 1e400, which
# the world cannot read: it refuses the call, and the adapter has gone on without its answer.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"sb","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"],"standingAnswers":true}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"standing":true,"call":{"kind":"hook","name":"getSteeringMessages","data":{"x":1e400}}}'
printf '%s\n' '{"type":"notify","session":1,"notification":{"kind":"end","data":{"messages":[]}}}'
printf '%s\n' '{"type":"idle","session":1}'
while read -r line; do
  case "$line" in
    *'"type":"stop"'*) printf '%s\n' '{"type":"stopped","session":1}' ;;
    *'"type":"shutdown"'*) exit 0 ;;
    *) printf '%s\n' '{"type":"idle","session":1}' ;;
  esac
done
