#!/bin/sh
# Greets, then makes stream calls for ever, whatever their answers say; never reports idle.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}'
read -r start
i=0
while :; do
  i=$((i+1))
  printf '{"type":"call","id":%d,"session":1,"call":{"kind":"stream","data":{"model":{"id":"faux-1","api":"faux","provider":"faux"},"messages":[],"thinkingLevel":"off","apiKey":""}}}\n' "$i"
  read -r answer || exit 0
done
