set -uo pipefail
server=/work/wt-flake/build/server/shlo-server tmp=/tmp/flake-sh
n=0
src=$(sed 's/^free_port() {/real_free_port() {/' /work/wt-flake/tests/server/start_server.sh)
free_port() { n=$((n+1)); if [ $n -le 2 ]; then cat /tmp/flake-sh/busy; else real_free_port; fi; }
eval "$(echo "$src" | sed '/^free_port() {/,/^}/d')"
echo "started: $hport $bport pid $pid"; curl -s http://127.0.0.1:$hport/healthz; echo
kill $pid; wait $pid; echo rc $?
