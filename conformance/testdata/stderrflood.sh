#!/bin/sh
# Greets, writes one stderr line of 17 MB (over any line limit), then a last line, and exits.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
head -c 17000000 /dev/zero | tr '\000' e >&2
printf '\n%s\n' 'boom after the flood' >&2
exit 3
