#!/bin/sh
# Greets saying it lacks a feature that does not exist.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"lacking","version":"0","tracks":"1.6.0","capabilities":{"hooks":[],"lacks":["images"]}}'
cat >/dev/null
