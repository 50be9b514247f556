#!/bin/bash
# Issue 32 benchmark: mpcmc with a second worker over SSH whose session freezes
# (SIGSTOP of the host side: a network partition) 2 s after it starts, against
# `mpcmc engine`, at three clocks (issue 32). B: the mpcmc binary (a release
# build); D: a scratch directory; FASTCHESS: the runner. Needs sshd and ssh.
R=$(cd "$(dirname "$0")/../.." && pwd); B=${B:-$R/target/release/mpcmc}; D=${D:-/tmp/frozen-ssh}
FC=${FASTCHESS:-$R/../shared/tools/fastchess}; S=$D/sshd; rm -rf $S; mkdir -p $S /run/sshd
ssh-keygen -q -t ed25519 -N "" -f $S/host_key; ssh-keygen -q -t ed25519 -N "" -f $S/client_key
cp $S/client_key.pub $S/authorized_keys; PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
printf "Port $PORT\nListenAddress 127.0.0.1\nHostKey $S/host_key\nAuthorizedKeysFile $S/authorized_keys\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nStrictModes no\nUsePAM no\nPidFile $S/sshd.pid\nLogLevel ERROR\n" > $S/sshd_config
/usr/sbin/sshd -D -E $S/sshd.log -f $S/sshd_config & SSHD=$!; sleep 1
SSH="ssh -F /dev/null -p $PORT -i $S/client_key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5 127.0.0.1 $B engine"
printf '#!/bin/sh\nexec %s --workers="builtin; %s" "$@"\n' "$B" "$SSH" > $D/mpcmc-ssh.sh; chmod +x $D/mpcmc-ssh.sh
# The freezer: every session of the daemon older than 2 s is stopped, with what it runs.
( while kill -0 $SSHD 2>/dev/null; do
    for p in $(pgrep -P $SSHD); do
      if [ $(ps -o etimes= -p $p 2>/dev/null || echo 0) -ge 2 ]; then
        for q in $p $(pgrep -P $p) $(for c in $(pgrep -P $p); do pgrep -P $c; done); do
          grep -q '^State:.*T' /proc/$q/status 2>/dev/null || { kill -STOP $q; echo "$(date +%T) froze $q" >> $D/frozen.txt; }
        done
      fi
    done; sleep 0.2; done ) & FREEZER=$!
for tc in "tc=1+0.01 10" "tc=5+0.05 10" "st=0.5 4"; do set -- $tc
  W=$D/${1//[=+.]/_}; mkdir -p $W; cd $W
  $FC -engine cmd=$D/mpcmc-ssh.sh name=frozen \
    -engine cmd=$B name=engine args="engine" -each $1 \
    -openings file=$R/tests/data/openings.epd format=epd order=random -srand 3202 \
    -rounds $(($2/2)) -repeat -concurrency 1 -pgnout file=games.pgn > log.txt 2>&1
done
kill $FREEZER; for p in $(pgrep -P $SSHD); do pkill -9 -P $p; kill -9 $p; done; kill $SSHD
echo done > $D/done.txt
