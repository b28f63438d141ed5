#!/bin/sh
# Marks a queue poll standing without claiming standing answers: the start promised none.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"standing":true,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}'
sleep 3600
