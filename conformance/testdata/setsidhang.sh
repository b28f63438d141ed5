#!/bin/sh
# Greets, leaves a child in a session of its own (setsid) and another whose parent is gone,
# then never reports idle.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
setsid sleep 3600 </dev/null >/dev/null 2>&1 &
(setsid sleep 3601 </dev/null >/dev/null 2>&1 &)
sleep 3600
