/*
 * lint_secrets.c - where credentials live on macOS and Linux developer
 * machines (see lint_secrets.h). Each entry names the smallest pattern that
 * holds the secret, so a grant on a neighbour (`~/.ssh-backup`, `~/.config`
 * without gh) is judged by exact overlap, not by a prefix guess.
 */
#include "lint_secrets.h"

static const struct lint_secret secrets[] = {
	{ "~/.ssh/**", "SSH keys" },
	{ "~/.gnupg/**", "GnuPG keys" },
	{ "~/.aws/**", "AWS credentials" },
	{ "~/.config/gcloud/**", "Google Cloud credentials" },
	{ "~/.azure/**", "Azure CLI credentials" },
	{ "~/.oci/**", "Oracle Cloud credentials" },
	{ "~/.config/doctl/**", "DigitalOcean credentials" },
	{ "~/.kube/**", "Kubernetes credentials" },
	{ "~/.docker/config.json", "Docker registry credentials" },
	{ "~/.netrc", "netrc passwords" },
	{ "~/.git-credentials", "git credential store" },
	{ "~/.config/git/credentials", "git credential store" },
	{ "~/.config/gh/hosts.yml", "GitHub CLI token" },
	{ "~/.config/hub", "hub GitHub token" },
	{ "~/.npmrc", "npm registry token" },
	{ "~/.pypirc", "PyPI token" },
	{ "~/.gem/credentials", "RubyGems API key" },
	{ "~/.cargo/credentials", "crates.io token" },
	{ "~/.cargo/credentials.toml", "crates.io token" },
	{ "~/.terraform.d/credentials.tfrc.json", "Terraform Cloud token" },
	{ "~/.vault-token", "Vault token" },
	{ "~/.pgpass", "PostgreSQL passwords" },
	{ "~/.my.cnf", "MySQL passwords" },
	{ "~/.s3cfg", "S3 credentials" },
	{ "~/.boto", "Google Cloud Storage credentials" },
	{ "~/.config/rclone/rclone.conf", "rclone remotes credentials" },
	{ "~/.config/op/**", "1Password CLI session" },
	{ "~/.password-store/**", "pass password store" },
	{ "~/.local/share/keyrings/**", "GNOME keyring" },
	{ "~/Library/Keychains/**", "macOS keychains" },
	{ "/Library/Keychains/**", "macOS system keychain" },
	{ "~/Library/Cookies/**", "macOS cookies" },
	{ "~/Library/Safari/**", "Safari profile" },
	{ "~/Library/Application Support/Google/Chrome/**", "Chrome profile" },
	{ "~/Library/Application Support/Chromium/**", "Chromium profile" },
	{ "~/Library/Application Support/BraveSoftware/**", "Brave profile" },
	{ "~/Library/Application Support/Microsoft Edge/**", "Edge profile" },
	{ "~/Library/Application Support/Firefox/**", "Firefox profile" },
	{ "~/Library/Application Support/Arc/**", "Arc profile" },
	{ "~/.mozilla/**", "Firefox profile" },
	{ "~/.config/google-chrome/**", "Chrome profile" },
	{ "~/.config/chromium/**", "Chromium profile" },
	{ "~/.config/BraveSoftware/**", "Brave profile" },
};

const struct lint_secret *lint_secrets(size_t *n)
{
	*n = sizeof secrets / sizeof secrets[0];
	return secrets;
}
