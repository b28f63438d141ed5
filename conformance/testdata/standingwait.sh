#!/bin/sh
# Takes standing answers, marks a steering poll standing, then waits for an answer anyway:
# the harness writes none, and the timeout must say why.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"sw","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"],"standingAnswers":true}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"standing":true,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}'
read -r answer
sleep 3600
