# shellcheck shell=bash
# Sourced by start.sh, test.sh and with-stack.sh, from the repository's root: installs and
# compiles what is missing (ensure-deps.sh), brings the local stack up, and exports the addresses
# it ensured (stack.sh prints them as NAME=value lines; its progress goes to stderr).
bash scripts/ensure-deps.sh
stack_env="$(bash scripts/stack.sh up)" # fails here, with stack.sh's message, if the stack cannot start
while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done <<< "$stack_env"
export KAFKAJS_NO_PARTITIONER_WARNING=1
