#!/bin/sh
# Greets, leaves a grandchild in a session of its own (setsid, its parent gone) that keeps
# stdout open, and exits in the middle of the scenario.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
(setsid sleep 3600 &)
exit 0
