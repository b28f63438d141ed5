#!/bin/sh
# Greets, then prints a line that is not JSON (a log line on stdout).
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
echo 'starting run for scenario...'
sleep 3600
