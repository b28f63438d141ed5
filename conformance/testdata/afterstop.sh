#!/bin/sh
# Greets, reports idle at once, then answers stop with events for ever, never stopped.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"idle","session":1}'
read -r stop
while :; do
  printf '%s\n' '{"type":"notify","session":1,"notification":{"kind":"event","data":{"type":"agent_start"}}}' || exit 0
done
