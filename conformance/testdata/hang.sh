#!/bin/sh
# Greets, then never reports idle; a background child must die with it (process group).
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
sleep 3600 &
sleep 3600
