// SPDX-License-Identifier: GPL-2.0-only
/*
 * tern-agent: the guest half of the test harness's control channel.
 *
 * It runs as PID 1 (exec'ed by /init), reads framed requests from a virtio-serial port and
 * runs each as "/bin/sh SCRIPT" in its own session, concurrently, streaming stdout and
 * stderr back and reporting the exit status. The host half is scripts/harness/agent.py.
 *
 * Every frame, both directions, is one ASCII header line followed by a raw payload:
 *
 *     T1 <TYPE> <id> <len> [args...]\n<len bytes>
 *
 * host -> guest:
 *     T1 PING <id> 0                           answered by PONG
 *     T1 RUN  <id> <len> <timeout_ms> <script_len>
 *                                              payload: script_len bytes of shell script,
 *                                              then the command's stdin (len - script_len);
 *                                              timeout_ms 0 means none
 *     T1 KILL <id> 0 <signo>                   signal the command's process group
 * guest -> host:
 *     T1 HELLO 0 <len>                         payload: "hostname kernel-release"
 *     T1 PONG <id> 0
 *     T1 OUT  <id> <len> <fd>                  a chunk of the command's stdout (1) / stderr (2)
 *     T1 EXIT <id> 0 <code> <signal> <timed_out> <duration_us>
 *     T1 ERR  <id> <len>                       payload: why the request failed (no EXIT follows)
 *
 * A command's EXIT is sent once its shell has exited and the output it wrote has been
 * drained; background processes it left behind keep running but lose their stdout/stderr.
 * On timeout the whole process group gets SIGKILL and EXIT carries timed_out=1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS	256
#define MAX_HEADER	512
#define CHUNK		65536
#define WORKDIR		"/run/tern-agent"

struct job {
	uint64_t id;
	pid_t pid;		/* 0 when the slot is free */
	int out[3];		/* read ends of stdout (1) and stderr (2) pipes, -1 when closed */
	uint64_t start_us;
	uint64_t deadline_us;	/* 0: no timeout */
	int timed_out;
};

static struct job jobs[MAX_JOBS];
static int port_fd = -1;
static const char *port_path;
static int sigpipe_fds[2];
static char inbuf[8 << 20];
static size_t inlen;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("tern-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void open_port(void)
{
	for (;;) {
		port_fd = open(port_path, O_RDWR | O_CLOEXEC);
		if (port_fd >= 0)
			return;
		logmsg("open %s: %s", port_path, strerror(errno));
		sleep(1);
	}
}

/* Write all of @buf to the port; blocks while the host is not reading. */
static void write_all(const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(port_fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			logmsg("write port: %s", n < 0 ? strerror(errno) : "short");
			usleep(100000);
			continue;
		}
		p += n;
		len -= n;
	}
}

static void send_frame(const char *type, uint64_t id, const void *data, size_t len,
		       const char *args)
{
	char hdr[MAX_HEADER];
	int n = snprintf(hdr, sizeof(hdr), "T1 %s %llu %zu%s%s\n", type,
			 (unsigned long long)id, len, args ? " " : "", args ? args : "");

	/* One write when small, so that the host sees whole frames promptly. */
	if (len && len <= CHUNK) {
		static char buf[MAX_HEADER + CHUNK];

		memcpy(buf, hdr, n);
		memcpy(buf + n, data, len);
		write_all(buf, n + len);
		return;
	}
	write_all(hdr, n);
	if (len)
		write_all(data, len);
}

static void send_err(uint64_t id, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	logmsg("request %llu: %s", (unsigned long long)id, msg);
	send_frame("ERR", id, msg, strlen(msg), NULL);
}

static void on_sigchld(int sig)
{
	int saved = errno;
	char c = 0;

	(void)sig;
	if (write(sigpipe_fds[1], &c, 1) < 0) {
		/* the pipe is full: a wakeup is already pending */
	}
	errno = saved;
}

static struct job *find_job(uint64_t id)
{
	for (int i = 0; i < MAX_JOBS; i++)
		if (jobs[i].pid && jobs[i].id == id)
			return &jobs[i];
	return NULL;
}

static int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		data += n;
		len -= n;
	}
	return close(fd);
}

static void start_job(uint64_t id, const char *payload, size_t len, uint64_t timeout_ms,
		      size_t script_len)
{
	char script[PATH_MAX], input[PATH_MAX];
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	struct job *job = NULL;
	pid_t pid;

	if (script_len > len)
		return send_err(id, "script_len %zu > len %zu", script_len, len);
	if (find_job(id))
		return send_err(id, "duplicate id");
	for (int i = 0; i < MAX_JOBS && !job; i++)
		if (!jobs[i].pid)
			job = &jobs[i];
	if (!job)
		return send_err(id, "too many commands running (%d)", MAX_JOBS);

	snprintf(script, sizeof(script), WORKDIR "/%llu.sh", (unsigned long long)id);
	snprintf(input, sizeof(input), WORKDIR "/%llu.in", (unsigned long long)id);
	if (write_file(script, payload, script_len) ||
	    write_file(input, payload + script_len, len - script_len))
		return send_err(id, "cannot write %s: %s", script, strerror(errno));
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		send_err(id, "pipe: %s", strerror(errno));
		goto fail;
	}

	pid = fork();
	if (pid < 0) {
		send_err(id, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int in = open(input, O_RDONLY);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setsid();
		if (in < 0 || dup2(in, 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(127);
		unlink(input);	/* the open descriptor keeps the data */
		if (chdir("/root"))
			_exit(127);
		execl("/bin/sh", "sh", script, (char *)NULL);
		_exit(127);
	}
	close(outp[1]);
	close(errp[1]);
	fcntl(outp[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	memset(job, 0, sizeof(*job));
	job->id = id;
	job->pid = pid;
	job->out[0] = -1;
	job->out[1] = outp[0];
	job->out[2] = errp[0];
	job->start_us = now_us();
	job->deadline_us = timeout_ms ? job->start_us + timeout_ms * 1000 : 0;
	return;
fail:
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	unlink(script);
	unlink(input);
}

/* Forward what is readable on one output pipe; @drain: keep going until it is empty. */
static void pump(struct job *job, int fd_no, int drain)
{
	static char buf[CHUNK];
	char args[8];
	size_t total = 0;

	snprintf(args, sizeof(args), "%d", fd_no);
	while (job->out[fd_no] >= 0) {
		ssize_t n = read(job->out[fd_no], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(job->out[fd_no]);
			job->out[fd_no] = -1;
			return;
		}
		send_frame("OUT", job->id, buf, n, args);
		total += n;
		/* A process left behind may write forever: never drain more than 64 MB. */
		if (!drain || total > (64u << 20))
			return;
	}
}

static void finish_job(struct job *job, int status)
{
	char args[128], path[PATH_MAX];
	int code = -1, sig = 0;

	pump(job, 1, 1);
	pump(job, 2, 1);
	for (int i = 1; i <= 2; i++)
		if (job->out[i] >= 0)
			close(job->out[i]);
	if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		sig = WTERMSIG(status);
	snprintf(args, sizeof(args), "%d %d %d %llu", code, sig, job->timed_out,
		 (unsigned long long)(now_us() - job->start_us));
	send_frame("EXIT", job->id, NULL, 0, args);
	snprintf(path, sizeof(path), WORKDIR "/%llu.sh", (unsigned long long)job->id);
	unlink(path);
	job->pid = 0;
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		/* As PID 1 we also reap orphans that are not ours. */
		for (int i = 0; i < MAX_JOBS; i++)
			if (jobs[i].pid == pid) {
				finish_job(&jobs[i], status);
				break;
			}
	}
}

/* Parse and execute every complete frame in inbuf. */
static void handle_input(void)
{
	size_t pos = 0;

	while (pos < inlen) {
		char *start = inbuf + pos, *nl = memchr(start, '\n', inlen - pos);
		char hdr[MAX_HEADER], type[16];
		unsigned long long id, len, a1 = 0, a2 = 0;
		int n;

		if (!nl) {
			if (inlen - pos >= MAX_HEADER) {
				logmsg("header too long: dropping input");
				pos = inlen;
			}
			break;
		}
		if ((size_t)(nl - start) >= sizeof(hdr)) {
			logmsg("header too long: dropping a line");
			pos += nl - start + 1;
			continue;
		}
		memcpy(hdr, start, nl - start);
		hdr[nl - start] = 0;
		n = sscanf(hdr, "T1 %15s %llu %llu %llu %llu", type, &id, &len, &a1, &a2);
		if (n < 3) {
			logmsg("bad header '%.80s': dropping the line", hdr);
			pos += nl - start + 1;
			continue;
		}
		if (len > sizeof(inbuf) - MAX_HEADER) {
			/* Cannot buffer it: skip the header and let the payload resync. */
			send_err(id, "payload too large (%llu)", len);
			pos += nl - start + 1;
			continue;
		}
		if ((size_t)(nl + 1 - inbuf) + len > inlen)
			break;	/* wait for the rest of the payload */
		pos = nl + 1 - inbuf + len;
		if (!strcmp(type, "PING"))
			send_frame("PONG", id, NULL, 0, NULL);
		else if (!strcmp(type, "RUN") && n == 5)
			start_job(id, nl + 1, len, a1, a2);
		else if (!strcmp(type, "KILL") && n >= 4) {
			struct job *job = find_job(id);

			if (job)
				kill(-job->pid, (int)a1);
		} else
			send_err(id, "unknown request '%s'", type);
	}
	memmove(inbuf, inbuf + pos, inlen - pos);
	inlen -= pos;
}

static void send_hello(void)
{
	char msg[256];
	struct utsname u;

	uname(&u);
	snprintf(msg, sizeof(msg), "%s %s", u.nodename, u.release);
	send_frame("HELLO", 0, msg, strlen(msg), NULL);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART };

	if (argc != 2) {
		fprintf(stderr, "usage: %s PORT\n", argv[0]);
		return 2;
	}
	port_path = argv[1];
	mkdir(WORKDIR, 0700);
	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK))
		return 1;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	open_port();
	send_hello();

	for (;;) {
		struct pollfd pfd[2 + 2 * MAX_JOBS];
		struct job *owner[2 + 2 * MAX_JOBS];
		int which[2 + 2 * MAX_JOBS];
		uint64_t now = now_us(), next = 0;
		int npfd = 0, timeout = -1, rc;

		pfd[npfd++] = (struct pollfd){ .fd = sigpipe_fds[0], .events = POLLIN };
		pfd[npfd++] = (struct pollfd){ .fd = port_fd, .events = POLLIN };
		for (int i = 0; i < MAX_JOBS; i++) {
			struct job *job = &jobs[i];

			if (!job->pid)
				continue;
			if (job->deadline_us && !job->timed_out) {
				if (now >= job->deadline_us) {
					job->timed_out = 1;
					kill(-job->pid, SIGKILL);
				} else if (!next || job->deadline_us < next) {
					next = job->deadline_us;
				}
			}
			for (int f = 1; f <= 2; f++) {
				if (job->out[f] < 0)
					continue;
				owner[npfd] = job;
				which[npfd] = f;
				pfd[npfd++] = (struct pollfd){ .fd = job->out[f], .events = POLLIN };
			}
		}
		if (next)
			timeout = (int)((next - now) / 1000) + 1;
		rc = poll(pfd, npfd, timeout);
		if (rc < 0) {
			if (errno != EINTR)
				logmsg("poll: %s", strerror(errno));
			continue;
		}
		if (pfd[0].revents) {
			char drain[64];

			while (read(sigpipe_fds[0], drain, sizeof(drain)) > 0)
				;
		}
		for (int i = 2; i < npfd; i++)
			if (pfd[i].revents && owner[i]->pid)
				pump(owner[i], which[i], 0);
		reap();
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(port_fd, inbuf + inlen, sizeof(inbuf) - inlen);

			if (n > 0) {
				inlen += n;
				handle_input();
			} else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
				/* The host closed its end: wait for it to come back. */
				usleep(200000);
			}
		}
	}
}
