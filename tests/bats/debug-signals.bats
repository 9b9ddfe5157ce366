#!/usr/bin/env bats
# sufs-debug and signals: no signal costs a -w session its changes.  Ctrl-C
# at the prompt cancels the line typed, as in bash and debugfs; SIGINT with
# commands from a file, and SIGTERM or SIGHUP anywhere, stop the commands,
# write back what was changed, say so, and exit 4.

load helper

bats_require_minimum_version 1.5.0

setup() {
	IMG=$T/img
	mkimg "$IMG" 16M
	export SUFS_DEBUG_HISTORY=
}

# prompt EXPECT-BODY: run sufs-debug -w at a prompt under expect(1), with
# the body's commands; the transcript in $output, its exit status last
prompt() {
	require_cmd expect
	cat >"$T/session.exp" <<-EOF
		set timeout 20
		log_user 1
		spawn $DEBUG -w $IMG
		expect "> "
		$1
		expect eof
		catch wait result
		puts "\nexit [lindex \$result 3]"
	EOF
	run expect "$T/session.exp"
}

@test "Ctrl-C at the prompt cancels the line typed, and the session goes on" {
	prompt '
		send "mkdir /cancelled"
		send "\003"
		expect "> "
		send "mkdir /kept\r"
		expect "> "
		send "\003"
		expect "> "
		send "quit\r"'
	assert_line "exit 0"
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line kept
	refute_line cancelled
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "SIGHUP and SIGTERM at the prompt write back the changes, say so and exit 4" {
	for sig in HUP TERM; do
		prompt "
			send \"mkdir /by$sig\\r\"
			expect \"> \"
			exec kill -$sig [exp_pid]"
		assert_line "exit 4"
		assert_line --partial "sufs-debug: $( [ $sig = HUP ] && echo Hangup || echo Terminated): no more commands run; writing back the changes made"
		run "$DEBUG" -R "stat /by$sig" "$IMG"
		assert_success
		run "$FSCK" -fn "$IMG"
		assert_success
	done
}

@test "SIGINT with commands from a file stops the command running and the rest, and writes back what was done" {
	# cat writes the file to a fifo nobody reads yet: it is blocked there
	# when the signal comes, and stops at its next chunk
	printf "create /big\nwrite /big 0 8M 7\n" | "$DEBUG" -w -f - "$IMG"
	printf 'mkdir /first\ncat /big\nmkdir /never\n' >"$T/cmds"
	mkfifo "$T/out"
	"$DEBUG" -w -f "$T/cmds" "$IMG" >"$T/out" 2>"$T/err" &
	pid=$!
	exec 6<"$T/out"
	head -c 4096 <&6 >/dev/null
	kill -INT "$pid"
	cat <&6 >/dev/null
	exec 6<&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 4 ] || fail "exit status $st, not 4"
	run cat "$T/err"
	assert_line --regexp '^sufs-debug: cat /big: interrupted at byte [0-9]+$'
	assert_line "sufs-debug: Interrupt: no more commands run; writing back the changes made"
	run "$DEBUG" -R "ls /" "$IMG"
	assert_line first
	refute_line never
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "SIGTERM to -R stops its command, writes back and exits 4" {
	printf "create /big\nwrite /big 0 8M 7\n" | "$DEBUG" -w -f - "$IMG"
	mkfifo "$T/out"
	"$DEBUG" -w -R "cat /big" "$IMG" >"$T/out" 2>"$T/err" &
	pid=$!
	exec 6<"$T/out"
	head -c 4096 <&6 >/dev/null
	kill -TERM "$pid"
	cat <&6 >/dev/null
	exec 6<&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 4 ] || fail "exit status $st, not 4"
	run cat "$T/err"
	assert_line --regexp '^sufs-debug: cat /big: interrupted at byte [0-9]+$'
	assert_line "sufs-debug: Terminated: no more commands run; writing back the changes made"
	run "$FSCK" -fn "$IMG"
	assert_success
}
