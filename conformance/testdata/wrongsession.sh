#!/bin/sh
# Greets, then reports idle for a session that is not running.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"idle","session":99}'
sleep 3600
