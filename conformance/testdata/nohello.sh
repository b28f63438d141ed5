#!/bin/sh
# Exits before greeting.
echo "cannot find my dependencies" >&2
exit 5
