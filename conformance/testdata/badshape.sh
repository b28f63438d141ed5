#!/bin/sh
# Greets, then sends a call whose id is a string and whose tool data lacks fields.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"call","id":"one","session":1,"call":{"kind":"tool","data":{"toolCallId":"t1"}}}'
sleep 3600
