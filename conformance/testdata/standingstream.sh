#!/bin/sh
# Claims standing answers, then marks a stream call standing: only hooks have them.
read -r hello
printf '%s\n' '{"type":"hello","protocol":2,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":["getSteeringMessages","getFollowUpMessages"],"standingAnswers":true}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"standing":true,"call":{"kind":"stream","data":{"model":{"id":"faux-1","api":"faux","provider":"faux"},"messages":[],"thinkingLevel":"off","apiKey":""}}}'
sleep 3600
