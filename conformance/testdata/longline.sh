#!/bin/sh
# Greets, then prints a line longer than the harness's 16 MiB limit.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
head -c 17000000 /dev/zero | tr '\000' x
echo
sleep 3600
