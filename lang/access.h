/*
 * access.h - the access bits a rule grants or denies. They are the
 * language's (the parser maps each keyword to a set of them) and the IR
 * carries them unchanged, so they live here, below both.
 */
#ifndef CAGE_ACCESS_H
#define CAGE_ACCESS_H

/* Access bits. Keywords map to sets: `read` = READ|READ_META,
 * `write` = WRITE|CREATE|DELETE (see docs/language.md). */
enum {
	IR_A_READ = 1u << 0,      /* file contents, directory listing */
	IR_A_READ_META = 1u << 1, /* stat, readlink, access(2) */
	IR_A_WRITE = 1u << 2,     /* modify an existing file */
	IR_A_CREATE = 1u << 3,    /* create files, directories, links */
	IR_A_DELETE = 1u << 4,    /* unlink, rmdir, rename away */
	IR_A_EXEC = 1u << 5,      /* execve */
	IR_A_CONNECT = 1u << 6,   /* outbound network, host targets */
	IR_A_UNIX = 1u << 7,      /* connect to a unix socket, path targets */
	IR_A_MACH = 1u << 8,      /* mach-lookup of a service (macOS) */
};
#define IR_A_FILE (IR_A_READ | IR_A_READ_META | IR_A_WRITE | IR_A_CREATE | \
		   IR_A_DELETE | IR_A_EXEC)
#define IR_A_KW_READ (IR_A_READ | IR_A_READ_META)
#define IR_A_KW_WRITE (IR_A_WRITE | IR_A_CREATE | IR_A_DELETE)

#endif
