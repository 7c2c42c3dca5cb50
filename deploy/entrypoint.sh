#!/bin/sh
# Container entrypoint: prepare what the snippet sandbox needs, then drop to the bot user.
#
# As root (the default in the image): if the container's cgroup v2 tree is writable, create a
# sub-tree owned by the bot user, move this process into a leaf of it (cgroup v2 allows no
# processes in a cgroup that delegates controllers), enable memory/pids/cpu for its children
# and point the sandbox at it. Then exec the command as `studybot` with every capability
# dropped. Started as a non-root user, it changes nothing and just runs the command.
set -eu

CG=/sys/fs/cgroup
SUB="$CG/studybot"

if [ "$(id -u)" = "0" ]; then
    if [ -f "$CG/cgroup.controllers" ] && [ -w "$CG/cgroup.subtree_control" ] 2>/dev/null; then
        mkdir -p "$SUB/bot"
        echo "$$" > "$SUB/bot/cgroup.procs"
        # The root of the container's tree must have no processes before delegating.
        for pid in $(cat "$CG/cgroup.procs"); do echo "$pid" > "$SUB/bot/cgroup.procs" 2>/dev/null || true; done
        echo "+memory +pids +cpu" > "$CG/cgroup.subtree_control"
        echo "+memory +pids +cpu" > "$SUB/cgroup.subtree_control"
        chown -R studybot:studybot "$SUB"
        export SANDBOX_CGROUP_PARENT="$SUB"
    else
        echo "entrypoint: no writable cgroup v2 tree; /run will explain what is missing" >&2
    fi
    chown studybot:studybot /data
    exec setpriv --reuid=studybot --regid=studybot --init-groups \
        --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
fi
exec "$@"
