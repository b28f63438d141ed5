#!/bin/sh
# Greets, then exits cleanly in the middle of the first scenario.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
exit 0
