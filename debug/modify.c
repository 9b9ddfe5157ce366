/*
 * modify.c - sufs-debug's modifying commands (with -w): operations of the
 * script language of sufs-replay (replay/script.c), run from the current
 * directory.  All of them but snapshot and snapdelete (sufs-snap's work),
 * and no !ERRNO expectations.  The changes stay in memory under the write
 * mode's policy until they are written back (sync, quit).
 */
#include "config.h"
#include "commands.h"
#include "script.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_script(struct session *s, int argc, char **argv)
{
	struct script_ctx ctx;
	char err[512], *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	int i, rc;

	if (!f)
		return fail(argv[0], NULL, "out of memory");
	for (i = 0; i < argc; i++) {
		/* an alias (ln, mv, rm) runs under the operation's own name */
		const char *w = i ? argv[i] : command_find(argv[0])->name;
		if (i)
			fputc(' ', f);
		script_quote(f, w, strlen(w));
	}
	fclose(f);
	script_ctx_init(&ctx, s->fs, getuid(), getgid());
	ctx.cwd = s->cwd;
	ctx.inode_paths = 1;
	rc = script_exec_line(s->fs, line, &ctx, err, sizeof(err));
	free(line);
	if (rc == SCRIPT_OK)
		return 0;
	/* the message names the operation already */
	errmsg("%s", err);
	return 1;
}
