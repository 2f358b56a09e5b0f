# Sourced by tools/test.sh, sanitize.sh and fuzz.sh: wall time per phase, so a CI log
# shows where the time goes.
#   phase <name> <command...>       runs the command as one phase (its exit status is kept)
#   phase_begin <name> / phase_end  around phases that are more than one command
# Each phase prints its time when it ends; with EDGEWISE_PHASE_LOG set (tools/test.sh
# sets it) it is also appended there, and phase_summary prints the table.
phase_begin() {
  _phase_name=$1
  _phase_start=$SECONDS
  echo "=== phase ${_phase_name}"
}

phase_end() {
  local rc=${1:-0} secs=$((SECONDS - _phase_start))
  echo "=== phase ${_phase_name}: ${secs} s$( ((rc == 0)) || echo ", exit status $rc")"
  if [ -n "${EDGEWISE_PHASE_LOG:-}" ]; then
    printf '%s\t%d\t%d\n' "${_phase_name}" "$secs" "$rc" >>"$EDGEWISE_PHASE_LOG"
  fi
}

phase() {
  local name=$1 rc=0
  shift
  phase_begin "$name"
  "$@" || rc=$?
  phase_end "$rc"
  return "$rc"
}

# phase_summary <total seconds>: the table of the phases logged so far.
phase_summary() {
  [ -s "${EDGEWISE_PHASE_LOG:-}" ] || return 0
  echo "--- wall time per phase (s) ---"
  awk -F'\t' -v total="$1" '
    { printf "  %-14s %6d%s\n", $1, $2, ($3 != 0 ? "   (exit status " $3 ")" : ""); sum += $2 }
    END { printf "  %-14s %6d\n  %-14s %6d\n", "other", total - sum, "total", total }' "$EDGEWISE_PHASE_LOG"
}
