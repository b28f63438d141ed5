#!/bin/sh
# Greets saying it lacks two optional features, then exits when stdin ends.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"lacking","version":"0","tracks":"1.6.0","capabilities":{"hooks":[],"lacks":["continue","throwingHooks"]}}'
cat >/dev/null
