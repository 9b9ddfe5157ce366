/*
 * main.c - sufs-debug: open an image and run commands on it: one given
 * with -R, a file of them with -f, or typed at a prompt.
 *
 * Exit status (common/util.h's scheme, documented in sufs-debug(8)):
 *   0  every command succeeded
 *   1  usage error
 *   2  the image could not be opened (missing, not sufs, a bad superblock
 *      or group descriptor: the message says which)
 *   4  a command failed (with -f or at the prompt: at least one did)
 *   8  the command file could not be read
 *  16  the image could not be written back when closed
 * debugfs exits 0 whatever its commands did; scripts need to know.
 */
#include "config.h"

#include "commands.h"
#include "script.h"
#include "ctl.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>


/*
 * Signals.  None of them may cost the changes of a -w session, which live
 * in memory until the close writes them back.  So SIGINT, SIGTERM and
 * SIGHUP only set stop_signal; the command running stops at its next poll
 * (debug_interrupted(): rdump and file copies poll), and then:
 *  - at the prompt, SIGINT cancels the line being typed or the command
 *    running, as in bash and debugfs; the session goes on;
 *  - otherwise (SIGTERM, SIGHUP, or SIGINT with commands from -f, -R or a
 *    pipe) no more commands are read, and the image is closed as after
 *    `quit`: the changes are written back, and a close that fails says so.
 * A signal during the write-back itself is noted and does not stop it.
 */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

int debug_interrupted(void)
{
	return stop_signal != 0;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;  /* a write to the terminal is not cut short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Whether a signal ends the session: any but SIGINT at the prompt. */
static int signal_ends(int interactive)
{
	return stop_signal && (stop_signal != SIGINT || !interactive);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sufs-debug [-w | -c] [-s BLOCK] [-R COMMAND | -f CMDFILE|-] IMAGE\n"
		"\n"
		"Inspect a sufs image.  Without -R or -f, commands are read from a prompt\n"
		"(type `help` for the list).\n"
		"\n"
		"  -R COMMAND    run one command and exit with its status\n"
		"  -f CMDFILE    run the commands in CMDFILE (- for standard input), one a line;\n"
		"                every command runs, and the exit status is 4 if any failed\n"
		"  -w            open the image for writing (never written otherwise)\n"
		"  -c            catastrophic mode: read-only, checksums ignored, no bitmap read\n"
		"  -s BLOCK      read the backup superblock at block BLOCK (or BLOCK:BLOCKSIZE)\n"
		"  -h, --help    show this help\n"
		"  -V, --version show the version\n"
		"\n"
		"Exit status: 0 all commands succeeded, 1 usage error, 2 the image cannot be\n"
		"opened, 4 a command failed, 8 the command file cannot be read, 16 the image\n"
		"cannot be written back.  See sufs-debug(8).\n");
}

/* Run every line of f; stop early only at `quit`.  Returns 1 if any failed. */
static int run_file(struct session *s, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = 0;

	while (!s->quit && !signal_ends(0) && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (strlen(line) != (size_t)len) {
			/* the rest of the line would be lost to the parser */
			errmsg("a NUL byte in the line");
			status = 1;
			continue;
		}
		status |= command_line(s, line);
	}
	if (ferror(f))
		status = 1, errmsg("reading commands: %s", strerror(errno));
	free(line);
	return status;
}

/* ------------------------------------------------------------------------ */
/* The prompt: line editing, history in a file, completion, a pager          */
/* ------------------------------------------------------------------------ */

/* The session completion looks into (readline's callbacks take no argument). */
static struct session *completing;

/* $SUFS_DEBUG_HISTORY (empty: none), else ~/.sufs_debug_history; malloc()ed. */
static char *history_path(void)
{
	const char *e = getenv("SUFS_DEBUG_HISTORY"), *home = getenv("HOME");
	char *p;

	if (e)
		return *e ? strdup(e) : NULL;
	if (!home || !*home)
		return NULL;
	if (asprintf(&p, "%s/.sufs_debug_history", home) < 0)
		return NULL;
	return p;
}

#define HISTORY_LINES 1000

/* Names that complete a command word: every name and alias of the table. */
static char *command_generator(const char *text, int state)
{
	static const struct command *c;
	static int alias;
	size_t len = strlen(text);

	if (!state) {
		c = commands;
		alias = -1;
	}
	for (; c->name; c++, alias = -1) {
		const char *name;
		for (; alias < 0 || c->aliases[alias]; alias++) {
			name = alias < 0 ? c->name : c->aliases[alias];
			if (strncmp(name, text, len) == 0) {
				alias++;
				return strdup(name);
			}
		}
	}
	return NULL;
}

/* The typed word as bytes, as script_split() reads it: quotes dropped
 * (inside '...' every byte is itself; inside "..." and outside, the
 * backslash escapes apply).  *quote is the quote open where w starts (0:
 * none), and is left as the one open where it ends.  A word still being
 * typed may end inside a quote or an escape: what is there so far is taken. */
static char *unescape_word(const char *w, char *quote)
{
	char *out = malloc(strlen(w) + 1), *o = out;
	unsigned hi, lo;

	if (!out)
		return NULL;
	while (*w) {
		if (*quote == '\'' && *w != '\'') {
			*o++ = *w++;               /* inside '...': itself */
		} else if ((*w == '\'' || *w == '"') && (!*quote || *w == *quote)) {
			*quote = *quote ? 0 : *w;  /* opens or closes */
			w++;
		} else if (*w != '\\' || !w[1]) {
			*o++ = *w++;
		} else if (w[1] == 'x' && isxdigit((unsigned char)w[2]) &&
			   isxdigit((unsigned char)w[3])) {
			sscanf(w + 2, "%1x%1x", &hi, &lo);
			*o++ = (char)(hi << 4 | lo);
			w += 4;
		} else {
			*o++ = w[1] == 'n' ? '\n' : w[1] == 't' ? '\t' : w[1];
			w += 2;
		}
	}
	*o = '\0';
	return out;
}

/*
 * A name as it must be typed where quote is open (0: none): print_name()'s
 * escapes.  Outside quotes, a backslash before blanks and quotes, and
 * before a # that would start a comment; inside "...", before a ".  Inside
 * '...', where every byte is itself, the name's bytes as they are, and an
 * escape or a ' typed between a closing and an opening quote: it'\''s.  As
 * the first component of a path (first), a name shaped <INO> would name an
 * inode: ./ goes before it.
 */
static char *typeable(const char *name, size_t len, int first, char quote)
{
	char *e = escape_name(name, len), *out, *o;
	const char *p, *rest;
	uint32_t ino;
	size_t n;

	if (!e)
		return NULL;
	out = o = malloc(4 * strlen(e) + 3);
	if (out && first && script_inode_path(e, &ino, &rest)) {
		*o++ = '.';
		*o++ = '/';
	}
	for (p = e; out && *p; p++) {
		if (quote != '\'') {
			if (*p == '"' || (!quote && (*p == ' ' || *p == '\'' ||
						     (*p == '#' && p == e && first))))
				*o++ = '\\';
			*o++ = *p;
		} else if (*p == '\\' && p[1] == '\\') {
			*o++ = *p++;               /* a backslash is itself */
		} else if (*p == '\'') {
			memcpy(o, "'\\''", 4);      /* close, an escaped ', open again */
			o += 4;
		} else if (*p == '\\') {
			n = p[1] == 'x' ? 4 : 2;   /* \t, \n, \xHH: typed outside */
			*o++ = '\'';
			memcpy(o, p, n);
			o += n;
			*o++ = '\'';
			p += n - 1;
		} else {
			*o++ = *p;
		}
	}
	if (out)
		*o = '\0';
	free(e);
	return out;
}

struct path_matches {
	char **v;
	size_t n, next;
};

/* Every entry of the directory part of text whose name starts with the
 * rest, as the whole word to put on the line (a directory ending in /).
 * text starts inside the quote readline found open, if any. */
static void match_paths(struct path_matches *m, const char *text)
{
	struct session *s = completing;
	const char *slash = strrchr(text, '/');
	size_t dlen = slash ? (size_t)(slash - text) + 1 : 0, blen, i, n;
	char *dir = strndup(text, dlen), *d = NULL, *base = NULL;
	char quote = (char)rl_completion_quote_character, at_end;
	struct entry *v;
	uint32_t ino = s->cwd;
	int rc = 0;

	m->v = NULL;
	m->n = m->next = 0;
	if (dir)
		d = unescape_word(dir, &quote);  /* quote: then the one open at base */
	at_end = quote;
	if (d)
		base = unescape_word(text + dlen, &at_end);
	if (!base)
		goto out;
	if (dlen) {
		const char *rest;
		uint32_t from = s->cwd;

		/* <INO>/..., as the commands take it */
		if (!script_inode_path(d, &from, &rest))
			rc = sufs_namei(s->fs, s->cwd, d, 1, &ino);
		else if (*rest)
			rc = sufs_namei(s->fs, from, rest, 1, &ino);
		else
			ino = from;
	}
	if (rc || read_entries(s, ino, &v, &n))
		goto out;
	blen = strlen(base);
	m->v = calloc(n + 1, sizeof(*m->v));
	for (i = 0; m->v && i < n; i++) {
		char *t, *word;
		int isdir = v[i].ftype == SUFS_FT_DIR;
		if (is_dot_name(v[i].name, v[i].len) || v[i].len < blen ||
		    memcmp(v[i].name, base, blen) != 0)
			continue;
		t = typeable(v[i].name, v[i].len, dlen == 0, quote);
		if (t && asprintf(&word, "%s%s%s", dir, t, isdir ? "/" : "") >= 0)
			m->v[m->n++] = word;
		free(t);
	}
	/* one directory: go on typing inside it, no blank or closing quote
	 * after the slash */
	if (m->n == 1 && m->v[0][strlen(m->v[0]) - 1] == '/') {
		rl_completion_append_character = '\0';
		rl_completion_suppress_quote = 1;
	}
	free_entries(v, n);
out:
	free(dir);
	free(d);
	free(base);
}

static char *path_generator(const char *text, int state)
{
	static struct path_matches m;

	if (!state)
		match_paths(&m, text);
	if (m.next < m.n)
		return m.v[m.next++];
	free(m.v);
	m.v = NULL;
	m.n = m.next = 0;
	return NULL;
}

/* The first word completes to a command; after help, too; else a path. */
static char **complete(const char *text, int start, int end)
{
	const char *line = rl_line_buffer;
	int i = 0;

	(void)end;
	rl_attempted_completion_over = 1;  /* never the host's file names */
	while (i < start && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == start)
		return rl_completion_matches(text, command_generator);
	if ((strncmp(line + i, "help ", 5) == 0 || strncmp(line + i, "? ", 2) == 0))
		return rl_completion_matches(text, command_generator);
	return rl_completion_matches(text, path_generator);
}

/* A blank is part of the word when a backslash escapes it or a quote
 * holds it, by script_split()'s rules (ls "s p"/f is one word). */
static int is_quoted(char *text, int index)
{
	char quote = 0;
	int i;

	for (i = 0; i < index; i++) {
		if (quote == '\'') {
			if (text[i] == '\'')
				quote = 0;
		} else if (text[i] == '\\') {
			if (++i == index)
				return 1;
		} else if (text[i] == '\'' || text[i] == '"') {
			quote = !quote ? text[i] : text[i] == quote ? 0 : quote;
		}
	}
	return quote != 0;
}

/* "sufs-debug demo.img:/docs> ", the directory's names escaped as ls
 * prints them. */
static char *make_prompt(struct session *s)
{
	const char *base = strrchr(s->image, '/');
	char *cwd = dir_path(s, s->cwd), *e = cwd ? escape_name(cwd, strlen(cwd)) : NULL, *p;

	if (asprintf(&p, "sufs-debug %s:%s> ", base && base[1] ? base + 1 : s->image,
		     e ? e : "?") < 0)
		p = NULL;
	free(e);
	free(cwd);
	return p;
}

/* Lines the output takes on a screen cols wide. */
static size_t screen_lines(FILE *f, int cols)
{
	size_t lines = 0, col = 0;
	int c;

	rewind(f);
	while ((c = getc(f)) != EOF) {
		if (c == '\n' || (cols > 0 && (int)col == cols)) {
			lines++;
			col = c == '\n' ? 0 : 1;
		} else {
			col++;
		}
	}
	return lines + (col > 0);
}

static void copy_stream(FILE *from, FILE *to)
{
	char buf[8192];
	size_t n;

	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
	fflush(to);
}

/*
 * Run one line with its output caught in a temporary file; output longer
 * than the screen goes through $PAGER (default less), the rest straight
 * to the terminal.
 */
static int run_paged(struct session *s, const char *line)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	FILE *tmp = tmpfile(), *pager;
	const char *cmd = getenv("PAGER");
	int saved, rows = 0, cols = 0, status, st;

	fflush(stdout);
	saved = tmp ? dup(STDOUT_FILENO) : -1;
	if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		if (tmp)
			fclose(tmp);
		return command_line(s, line);  /* no pager then */
	}
	status = command_line(s, line);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);

	rl_get_screen_size(&rows, &cols);
	if (!cmd || !*cmd)
		cmd = "less";
	if (rows <= 0 || screen_lines(tmp, cols) < (size_t)rows) {
		copy_stream(tmp, stdout);
		fclose(tmp);
		return status;
	}
	if (!getenv("LESS"))
		setenv("LESS", "FRX", 1);  /* as git does: leave at the end, keep the screen */
	sigaction(SIGPIPE, &ign, &old);  /* the reader may quit early */
	pager = popen(cmd, "w");
	if (pager) {
		copy_stream(tmp, pager);
		st = pclose(pager);
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127) {
			warnmsg("pager %s not found (set PAGER)", cmd);
			copy_stream(tmp, stdout);
		}
	} else {
		copy_stream(tmp, stdout);
	}
	sigaction(SIGPIPE, &old, NULL);
	fclose(tmp);
	return status;
}

/*
 * readline's callback interface, so that a signal reaches the prompt: the
 * loop waits in select(), which a signal interrupts, and feeds readline a
 * character at a time.  The line read is handed over in typed_line.
 */
static char *typed_line;
static int line_done;

static void on_line(char *line)
{
	typed_line = line;
	line_done = 1;
	rl_callback_handler_remove();  /* the terminal as it was, for the command */
}

/* Cancel what is typed and start a fresh prompt, as bash does at ^C. */
static void cancel_line(void)
{
	rl_free_line_state();
	rl_callback_sigcleanup();
	rl_replace_line("", 0);
	rl_crlf();
	rl_on_new_line();
	rl_redisplay();
}

/* One line from the prompt: 0 and *line (NULL at end of input), or -1 when
 * a signal ends the session. */
static int read_line(const char *prompt, char **line)
{
	fd_set in;

	typed_line = NULL;
	line_done = 0;
	rl_callback_handler_install(prompt, on_line);
	while (!line_done) {
		if (stop_signal == SIGINT) {
			stop_signal = 0;
			cancel_line();
		}
		if (signal_ends(1)) {
			rl_callback_handler_remove();
			return -1;
		}
		FD_ZERO(&in);
		FD_SET(STDIN_FILENO, &in);
		if (select(STDIN_FILENO + 1, &in, NULL, NULL, NULL) < 0) {
			if (errno == EINTR)
				continue;
			rl_callback_handler_remove();
			*line = NULL;
			return 0;
		}
		rl_callback_read_char();
	}
	*line = typed_line;
	return 0;
}

/* The prompt, with line editing, completion and a history kept in a file. */
static int run_interactive(struct session *s)
{
	char *line, *prompt, *hist = history_path();
	int status = 0, paged = isatty(STDOUT_FILENO), rc;

	rl_readline_name = "sufs-debug";
	rl_attempted_completion_function = complete;
	rl_completer_word_break_characters = " \t";
	rl_completer_quote_characters = "'\"";
	rl_char_is_quoted_p = is_quoted;
	rl_catch_signals = 0;  /* ours: on_signal() */
	completing = s;
	stifle_history(HISTORY_LINES);
	if (hist && read_history(hist) == ENOENT)
		write_history(hist);  /* created (mode 0600) to append to */
	while (!s->quit) {
		prompt = make_prompt(s);
		rc = read_line(prompt ? prompt : "sufs-debug> ", &line);
		free(prompt);
		if (rc || !line)
			break;
		if (line[strspn(line, " \t")]) {
			add_history(line);
			if (hist)
				append_history(1, hist);
		}
		status |= paged ? run_paged(s, line) : command_line(s, line);
		free(line);
		if (signal_ends(1))
			break;
		if (stop_signal == SIGINT) {
			/* the command was interrupted (it said so); the prompt goes on */
			stop_signal = 0;
		}
	}
	if (!s->quit)
		putchar('\n');  /* end of input: leave the terminal on a fresh line */
	if (hist)
		history_truncate_file(hist, HISTORY_LINES);
	free(hist);
	return status;
}

/*
 * Say what keeps the image from opening.  The library answers "checksum
 * does not match" alike for a bad superblock and for a bad group
 * descriptor (one whose checksum fails or whose locations are wrong);
 * opened again with checksums ignored, it tells which.
 */
static void say_damage(const char *image, int rc)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;
	struct sufs_fs *fs;
	uint32_t g, bad = 0, first = 0, groups = 0; /* 0: not known */
	int sb_bad = 1;

	if (rc != -SUFS_ECHECKSUM && rc != -SUFS_ECORRUPT)
		return;
	/* the superblock passes its checks when this opens (a field of a
	 * descriptor, not of the superblock, is then what was corrupt) */
	if (sufs_open(image, SUFS_OPEN_IGNORE_CSUM, &fs) == 0) {
		if (sufs_dev_read(sufs_get_dev(fs), SUFS_SB_OFFSET, raw, sizeof(raw)) == 0) {
			sufs_super_decode(raw, &sb);
			sb_bad = sb.checksum != sufs_super_csum(raw);
		}
		groups = sufs_get_super(fs)->groups_count;
		for (g = 0; g < groups; g++)
			if (sufs_group_csum_bad(fs, g) && !bad++)
				first = g;
		sufs_close(fs);
	}
	if (sb_bad && groups == 1)
		errmsg("the superblock is damaged, and a file system of one group keeps no "
		       "backup of it");
	else if (sb_bad)
		errmsg("the superblock is damaged; fsck.sufs can rebuild it from a backup%s",
		       groups ? "" : " if there is one");
	if (bad == 1)
		errmsg("the descriptor of group %u is damaged (a bad checksum, wrong "
		       "locations or counts); fsck.sufs -f can rebuild it", first);
	else if (bad)
		errmsg("%u group descriptors are damaged (bad checksums, wrong locations or "
		       "counts), the first of group %u; fsck.sufs -f can rebuild them", bad, first);
}

int session_open(struct session *s)
{
	unsigned flags = s->writable ? SUFS_OPEN_RDWR : s->catastrophic ? SUFS_OPEN_IGNORE_CSUM : 0;
	int rc = open_image(s->image, flags, s->sb_offset, &s->fs);

	if (rc)
		return rc;
	/* the image's default write mode (sufs-tune -o), softdep unless set */
	if (s->writable && sufs_get_super(s->fs)->default_mode != SUFS_MODE_SOFTDEP) {
		rc = sufs_set_mode(s->fs, sufs_get_super(s->fs)->default_mode);
		if (rc) {
			sufs_abandon(s->fs);
			s->fs = NULL;
			return rc;
		}
	}
	/* write back only when asked (flush, sync, fsync, quit), so that the
	 * dependency views see what the commands left pending */
	sufs_set_writeback(s->fs, 100, 0);
	if (s->fixed_time)
		sufs_set_clock(s->fs, s->time_sec, 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *request = NULL, *cmdfile = NULL, *sb_arg = NULL;
	struct session s = { 0 };
	FILE *cmds = NULL;
	int c, rc, status;

	prog_init("sufs-debug", argv);
	while ((c = getopt_long(argc, argv, "wcs:R:f:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			s.writable = 1;
			break;
		case 'c':
			s.catastrophic = 1;
			break;
		case 's':
			sb_arg = optarg;
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
	if (s.writable && (s.catastrophic || sb_arg)) {
		/* a backup's close would write it over the primary: that is
		 * fsck.sufs's repair, made with its checks */
		errmsg("-w goes without %s: %s", s.catastrophic ? "-c" : "-s",
		       s.catastrophic ? "catastrophic mode only reads"
				      : "to repair from a backup superblock, run fsck.sufs -s");
		return EXIT_USAGE;
	}
	s.image = argv[optind];
	if (sb_arg && (rc = sb_option(s.image, sb_arg, &s.sb_offset)) != EXIT_OK)
		return rc;
	rc = source_date_epoch(&s.time_sec);
	if (rc < 0)
		return EXIT_USAGE;
	s.fixed_time = rc;

	if (cmdfile) {
		struct stat st;
		cmds = strcmp(cmdfile, "-") == 0 ? stdin : fopen(cmdfile, "r");
		if (cmds && fstat(fileno(cmds), &st) == 0 && S_ISDIR(st.st_mode)) {
			if (cmds != stdin)
				fclose(cmds);
			cmds = NULL;
			errno = EISDIR;  /* opened, but no file of commands */
		}
		if (!cmds) {
			errmsg("%s: %s", shown(cmdfile), strerror(errno));
			return EXIT_FILE;
		}
	}

	if (!s.writable)
		ctl_warn_if_live(s.image); /* what is read may be out of date */
	rc = session_open(&s);
	if (rc) {
		errmsg("cannot open %s: %s", shown(s.image), open_error(s.image, rc));
		say_damage(s.image, rc);
		if (cmds && cmds != stdin)
			fclose(cmds);
		return EXIT_IMAGE;
	}
	s.cwd = sufs_get_super(s.fs)->root_ino;
	catch_signals();

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
	status = status ? EXIT_FAILED : EXIT_OK;
	if (signal_ends(isatty(STDIN_FILENO) && !request && !cmds)) {
		errmsg("%s: no more commands run%s", strsignal(stop_signal),
		       s.writable && s.fs ? "; writing back the changes made" : "");
		status = EXIT_FAILED;
	}
	rc = s.fs ? sufs_close(s.fs) : 0;  /* none after a crash that could not reopen */
	if (rc) {
		errmsg("closing %s: %s%s", shown(s.image), sufs_strerror(rc),
		       s.writable ? "; what was not written is lost, and the image is left marked "
				    "not clean (run fsck.sufs)" : "");
		status = EXIT_IO;
	}
	if (edit_finish(&s, rc == 0))
		status = EXIT_IO;
	if (fflush(stdout) || ferror(stdout)) {
		errmsg("writing the output: %s", strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_FILE;
	}
	return status;
}
