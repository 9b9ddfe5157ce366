/*
 * main.c - sufs-debug: open an image and run commands on it: one given
 * with -R, a file of them with -f, or typed at a prompt.
 *
 * Exit status (documented in sufs-debug(8)):
 *   0  every command succeeded
 *   1  a command failed (with -f or at the prompt: at least one did), or
 *      the image could not be written back when closed
 *   2  usage error, or the command file could not be opened
 *   4  the image could not be opened (missing, not sufs, bad superblock)
 * debugfs exits 0 whatever its commands did; scripts need to know.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

enum {
	EXIT_OK = 0,
	EXIT_COMMAND = 1,
	EXIT_USAGE = 2,
	EXIT_OPEN = 4,
};

#define PROMPT "sufs-debug: "

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sufs-debug [-w] [-R COMMAND | -f CMDFILE|-] IMAGE\n"
		"\n"
		"Inspect a sufs image.  Without -R or -f, commands are read from a prompt\n"
		"(type `help` for the list).\n"
		"\n"
		"  -R COMMAND    run one command and exit with its status\n"
		"  -f CMDFILE    run the commands in CMDFILE (- for standard input), one a line;\n"
		"                every command runs, and the exit status is 1 if any failed\n"
		"  -w            open the image for writing (never written otherwise)\n"
		"  -h, --help    show this help\n"
		"  -V, --version show the version\n"
		"\n"
		"Exit status: 0 all commands succeeded, 1 a command failed, 2 usage error,\n"
		"4 the image cannot be opened.\n");
}

/* Run every line of f; stop early only at `quit`.  Returns 1 if any failed. */
static int run_file(struct session *s, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = 0;

	while (!s->quit && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		status |= command_line(s, line);
	}
	if (ferror(f))
		status = 1, errmsg("reading commands: %s", strerror(errno));
	free(line);
	return status;
}

/* The prompt, with line editing and history (in memory only). */
static int run_interactive(struct session *s)
{
	char *line;
	int status = 0;

	rl_readline_name = "sufs-debug";
	while (!s->quit && (line = readline(PROMPT)) != NULL) {
		const char *p = line + strspn(line, " \t");
		if (*p)
			add_history(line);
		status |= command_line(s, line);
		free(line);
	}
	if (!s->quit)
		putchar('\n');  /* end of input: leave the terminal on a fresh line */
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *request = NULL, *cmdfile = NULL;
	struct session s = { 0 };
	FILE *cmds = NULL;
	int c, rc, status;

	prog_init("sufs-debug");
	while ((c = getopt_long(argc, argv, "wR:f:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			s.writable = 1;
			break;
		case 'R':
			if (request) {
				errmsg("-R may be given once");
				return EXIT_USAGE;
			}
			request = optarg;
			break;
		case 'f':
			if (cmdfile) {
				errmsg("-f may be given once");
				return EXIT_USAGE;
			}
			cmdfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			print_version();
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		errmsg(optind == argc ? "no image given" : "one image only");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (request && cmdfile) {
		errmsg("-R and -f cannot be used together");
		return EXIT_USAGE;
	}
	s.image = argv[optind];

	if (cmdfile) {
		cmds = strcmp(cmdfile, "-") == 0 ? stdin : fopen(cmdfile, "r");
		if (!cmds) {
			errmsg("%s: %s", cmdfile, strerror(errno));
			return EXIT_USAGE;
		}
	}

	rc = sufs_open(s.image, s.writable ? SUFS_OPEN_RDWR : 0, &s.fs);
	if (rc) {
		errmsg("cannot open %s: %s", s.image, sufs_strerror(rc));
		if (rc == -SUFS_ECHECKSUM || rc == -SUFS_ECORRUPT)
			errmsg("the superblock is damaged; fsck.sufs can rebuild it from a backup");
		if (cmds && cmds != stdin)
			fclose(cmds);
		return EXIT_OPEN;
	}
	s.cwd = sufs_get_super(s.fs)->root_ino;

	if (request)
		status = command_line(&s, request);
	else if (cmds)
		status = run_file(&s, cmds);
	else if (isatty(STDIN_FILENO))
		status = run_interactive(&s);
	else
		status = run_file(&s, stdin);  /* piped: the same as -f - */

	if (cmds && cmds != stdin)
		fclose(cmds);
	rc = sufs_close(s.fs);
	if (rc) {
		errmsg("closing %s: %s", s.image, sufs_strerror(rc));
		status = EXIT_COMMAND;
	}
	if (edit_finish(&s, rc == 0))
		status = EXIT_COMMAND;
	if (fflush(stdout) || ferror(stdout)) {
		errmsg("writing the output: %s", strerror(errno));
		status = EXIT_COMMAND;
	}
	return status ? EXIT_COMMAND : EXIT_OK;
}
