#!/bin/sh
# Greets, then calls finishTurn, which the scenario does not install, and a tool nobody
# defined; then reports idle and answers stop.
read -r hello
printf '%s\n' '{"type":"hello","protocol":1,"name":"hostile","version":"0","tracks":"1.6.0","capabilities":{"hooks":[]}}'
read -r start
printf '%s\n' '{"type":"call","id":1,"session":1,"call":{"kind":"hook","name":"finishTurn","data":{"turn":{"message":{"role":"assistant","content":[],"stopReason":"stop","api":"faux","provider":"faux","model":"m","usage":{},"timestamp":0},"toolResults":[],"context":{"messages":[],"tools":[]},"newMessages":[]}}}}'
read -r answer
printf '%s\n' '{"type":"call","id":2,"session":1,"call":{"kind":"tool","data":{"toolCallId":"x","toolName":"ghost","args":{}}}}'
read -r answer
printf '%s\n' '{"type":"idle","session":1}'
read -r stop
printf '%s\n' '{"type":"stopped","session":1}'
read -r shutdown
