#!/usr/bin/env bash
# A team's MLflow tracking server for development and tests: a local PostgreSQL (Debian's package)
# holding the runs, and `mlflow server` in front of it, serving the artifacts from DIR/artifacts.
#
#   bash scripts/team_server.sh start DIR [PG_PORT] [MLFLOW_PORT]   # prints the export line to use
#   bash scripts/team_server.sh stop DIR
#
# Then every loclab command logs there: `export MLFLOW_TRACKING_URI=http://127.0.0.1:5055`, and
# `python -m experiments.run tracking=server …` (the analysis commands follow MLFLOW_TRACKING_URI).
# Both listen on 127.0.0.1 only; PostgreSQL trusts local connections, so do not expose it.
set -euo pipefail
action=${1:?start|stop}
dir=$(realpath -m "${2:?DIR}")
pg_port=${3:-55432}
mlflow_port=${4:-5055}
root=$(cd "$(dirname "$0")/.." && pwd)

pg_bin() {
  for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/initdb" ] && { echo "$candidate"; return; }
  done
  echo "installing PostgreSQL (apt-get install postgresql)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
  pg_bin
}

as_postgres() {  # PostgreSQL refuses to run as root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The cluster lives in DIR/pg, unless DIR is out of the postgres user's reach (a root-only temporary
# folder): then in a folder of its own under /var/tmp, named after DIR.
pg_home() {
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$dir"; then
    echo "/var/tmp/loclab-pg-$(printf %s "$dir" | sha256sum | cut -c1-16)"
  else
    echo "$dir/pg"
  fi
}

case "$action" in
start)
  bin=$(pg_bin)
  home=$(pg_home)
  mkdir -p "$dir/artifacts" "$home"
  if [ "$(id -u)" = 0 ]; then chown postgres "$home"; fi
  if [ ! -f "$home/data/PG_VERSION" ]; then
    as_postgres "$bin/initdb" -D "$home/data" --auth=trust --username=postgres -E UTF8 >/dev/null
  fi
  as_postgres "$bin/pg_ctl" -D "$home/data" -l "$home/postgres.log" -w \
    -o "-p $pg_port -k $home -c listen_addresses=127.0.0.1" start >/dev/null
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='mlflow'" \
    | grep -q 1 || as_postgres "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres mlflow
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false MLFLOW_DISABLE_TELEMETRY=true setsid "$root/.venv/bin/mlflow" server \
    --backend-store-uri "postgresql+psycopg2://postgres@127.0.0.1:$pg_port/mlflow" \
    --artifacts-destination "$dir/artifacts" --host 127.0.0.1 --port "$mlflow_port" --workers 1 --app-name loclab \
    >"$dir/mlflow.log" 2>&1 &
  echo $! >"$dir/mlflow.pid"
  for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$mlflow_port/health" >/dev/null && break
    sleep 0.5
  done
  curl -sf "http://127.0.0.1:$mlflow_port/health" >/dev/null || { echo "mlflow server did not start: $dir/mlflow.log" >&2; exit 1; }
  echo "export MLFLOW_TRACKING_URI=http://127.0.0.1:$mlflow_port"
  ;;
stop)
  if [ -f "$dir/mlflow.pid" ]; then
    kill -- -"$(cat "$dir/mlflow.pid")" 2>/dev/null || true  # the server's whole process group (setsid)
    rm -f "$dir/mlflow.pid"
  fi
  bin=$(pg_bin)
  as_postgres "$bin/pg_ctl" -D "$(pg_home)/data" -m fast stop >/dev/null 2>&1 || true
  ;;
*)
  echo "usage: team_server.sh start|stop DIR [PG_PORT] [MLFLOW_PORT]" >&2; exit 2 ;;
esac
