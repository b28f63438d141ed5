#!/bin/sh
# Greets, starts a child that keeps stdout open, and exits in the middle of the scenario.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"]}}'
read -r start
sleep 3600 &
exit 0
