#!/bin/sh
# Greets, then makes a call whose id is out of any integer's range.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"call","id":1e30,"session":1,"call":{"kind":"stream","data":{"model":{"id":"faux-1","api":"faux","provider":"faux"},"messages":[],"thinkingLevel":"off","apiKey":""}}}'
sleep 3600
