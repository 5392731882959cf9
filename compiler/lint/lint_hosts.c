/*
 * lint_hosts.c - findings about network grants: broad-host (`*`, a public
 * suffix such as `*.com` or `*.co.uk`, localhost or a loopback address
 * without a port) and ip-literal (an address instead of a name).
 *
 * Public suffixes: every single-label suffix is a top-level domain; the
 * multi-label ones below are the registries' public second levels people
 * actually meet. Of the suffixes companies run for their customers (the
 * private part of the Public Suffix List) only those where anyone can run
 * a server count (open_hosting); `*.githubusercontent.com` is a normal
 * grant.
 */
#include "lint_int.h"

#include <string.h>

static const char *const public_suffixes[] = {
	"co.uk", "org.uk", "ac.uk", "gov.uk", "ltd.uk", "plc.uk", "me.uk", "net.uk",
	"com.au", "net.au", "org.au", "edu.au", "gov.au",
	"co.nz", "org.nz", "net.nz",
	"co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp",
	"co.kr", "or.kr",
	"com.br", "net.br", "org.br",
	"com.cn", "net.cn", "org.cn",
	"com.hk", "com.tw", "com.sg", "com.my", "com.tr", "com.mx", "com.ar",
	"co.in", "net.in", "org.in",
	"co.za", "org.za",
	"co.il", "com.ua", "com.pl", "com.ru",
	"eu.org",
};

/* Suffixes under which anyone can run a server of their own in minutes:
 * a grant of "*.SUFFIX" reaches servers an attacker can stand up, which is
 * what an exfiltration channel needs. (Static hosts whose request logs
 * their users cannot read, such as githubusercontent.com, are not here.) */
static const char *const open_hosting[] = {
	"herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "workers.dev",
	"appspot.com", "web.app", "firebaseapp.com", "azurewebsites.net", "cloudfront.net",
	"ngrok.io", "ngrok-free.app", "ngrok.app", "trycloudflare.com", "glitch.me",
	"onrender.com", "fly.dev", "repl.co", "replit.dev", "deno.dev", "loca.lt",
	"serveo.net", "pipedream.net", "requestbin.com", "webhook.site",
};

static bool is_open_hosting(const char *s)
{
	for (size_t i = 0; i < sizeof open_hosting / sizeof open_hosting[0]; i++)
		if (strcmp(s, open_hosting[i]) == 0)
			return true;
	return false;
}

static bool is_public_suffix(const char *s)
{
	if (!strchr(s, '.'))
		return true;
	for (size_t i = 0; i < sizeof public_suffixes / sizeof public_suffixes[0]; i++)
		if (strcmp(s, public_suffixes[i]) == 0)
			return true;
	return false;
}

static bool is_loopback(const struct ir_host *h)
{
	if (h->kind == IR_H_NAME)
		return strcmp(h->name, "localhost") == 0;
	if (h->kind == IR_H_IPV4)
		return h->addr[0] == 127;
	if (h->kind == IR_H_IPV6) {
		static const uint8_t one[16] = { [15] = 1 };
		return memcmp(h->addr, one, 16) == 0;
	}
	return false;
}

static void check_host(struct lint_ctx *c, const struct ir_rule *r)
{
	const struct ir_host *h = &r->t.host;
	char ht[512];
	lint_target_text(r, ht, sizeof ht);
	if (h->kind == IR_H_ANY) {
		lint_report(c, "broad-host", r, NULL,
			    "allow connect %s reaches every host on the internet; list the hosts "
			    "the task needs", ht);
		return;
	}
	if (h->kind == IR_H_SUFFIX && is_public_suffix(h->name)) {
		lint_report(c, "broad-host", r, NULL,
			    "allow connect %s: '%s' is a public suffix, so this reaches every site "
			    "registered under it", ht, h->name);
		return;
	}
	if (h->kind == IR_H_SUFFIX && is_open_hosting(h->name)) {
		lint_report(c, "broad-host", r, NULL,
			    "allow connect %s: anyone can run a server under '%s', so this reaches "
			    "servers an attacker controls; name the hosts", ht, h->name);
		return;
	}
	if (is_loopback(h)) {
		size_t n = 0;
		for (size_t k = 0; k < h->nports; k++)
			n += (size_t)h->ports[k].hi - h->ports[k].lo + 1;
		if (h->nports == 0 || n >= 65535) {
			char bare[300];
			snprintf(bare, sizeof bare, h->kind == IR_H_IPV6 ? "[%s]" : "%s", h->name);
			lint_report(c, "broad-host", r, NULL,
				    "allow connect %s %s opens every loopback service (databases, "
				    "docker, debuggers); name the port, e.g. \"%s:3000\"",
				    ht, h->nports ? "with every port" : "without a port", bare);
		}
		return;
	}
	if (h->kind == IR_H_IPV4 || h->kind == IR_H_IPV6)
		lint_report(c, "ip-literal", r, NULL,
			    "allow connect %s names an IP address: addresses change hands and "
			    "shared hosts serve many sites; name the host instead", ht);
}

void lint_check_hosts(struct lint_ctx *c)
{
	const struct ir_profile *p = c->prof;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_HOST || r->effect != IR_ALLOW || lint_is_std(r->loc.file))
			continue;
		check_host(c, r);
	}
}
