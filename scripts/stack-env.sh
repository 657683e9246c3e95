# shellcheck shell=bash
# Sourced by start.sh, test.sh and with-stack.sh, from the repository's root. stack_start brings
# the local stack up in the background (it needs no node_modules) while the caller installs them
# and compiles what changed (ensure-deps.sh), and stack_wait waits for it and exports
# the addresses it ensured (stack.sh prints them as NAME=value lines; its progress goes to
# stderr). stack_env does the three in turn.
export KAFKAJS_NO_PARTITIONER_WARNING=1

stack_start() {
  STACK_ENV_OUT=$(mktemp)
  bash scripts/stack.sh up > "$STACK_ENV_OUT" &
  STACK_UP_PID=$!
}

stack_wait() {
  # Fails here, with stack.sh's message, if the stack cannot start.
  if ! wait "$STACK_UP_PID"; then rm -f "$STACK_ENV_OUT"; echo "[stack] the stack did not start (above)" >&2; return 1; fi
  while IFS= read -r line; do [ -n "$line" ] && export "${line?}"; done < "$STACK_ENV_OUT"
  rm -f "$STACK_ENV_OUT"
}

stack_env() {
  stack_start
  bash scripts/ensure-deps.sh
  stack_wait
}
