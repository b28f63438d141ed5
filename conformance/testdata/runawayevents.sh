#!/bin/sh
# Greets, then sends events for ever without reading; never reports idle.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}'
read -r start
while :; do
  printf '%s\n' '{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"agent_start"}}}' || exit 0
done
