#!/bin/sh
# Greets, makes a call, then makes another call under the same id.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}'
read -r answer
printf '%s\n' '{"type":"call","id":1,"session":1,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}'
sleep 3600
