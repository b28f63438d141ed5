#!/bin/sh
# Greets, then crashes on the first start with exit status 3 and some output.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
echo "loading the scenario" >&2
echo "panic: something broke" >&2
exit 3
