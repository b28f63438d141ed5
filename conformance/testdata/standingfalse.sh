#!/bin/sh
# Marks a call "standing": false: the mark is true or absent.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"],"standingAnswers":true}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"standing":false,"call":{"kind":"hook","name":"getSteeringMessages","data":{}}}'
sleep 3600
