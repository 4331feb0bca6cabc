# tests/lib/kernel.sh: what the tests that build kernels from Debian's
# linux-source-6.1 share (bisect.sh; kernel_artifact.sh has the same
# steps inline). Source after common.sh.
#
#   kernel_pkgs              install what a build needs (apt), or fail
#   kernel_repo              sets KREPO_SHA and KREPO (the git repository
#                            made from the tarball once, cached under
#                            /var/tmp/benchfleet, tag v6.1-deb)
#   KERNEL_TINY_FRAG         tinyconfig fragments that boot on tests/vm
#   kernel_cache_load DIR WORK   load every build kept in DIR into WORK's
#                            store and artifact directory (0: loaded)
#   kernel_cache_save DIR WORK   keep every done build of WORK's store in DIR

kernel_pkgs() {
	local p miss=() pkgs=(linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev git)
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
	done
	[ ${#miss[@]} -eq 0 ] && return 0
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1; }
}

# The repository, once per tarball (77 s here), locked against a parallel
# run of another kernel test making it at the same time (fd 8).
kernel_repo() {
	local T=/usr/src/linux-source-6.1.tar.xz
	KREPO_SHA=$(sha256sum "$T" | cut -c1-16)
	KREPO=/var/tmp/benchfleet/kgit-$KREPO_SHA
	mkdir -p /var/tmp/benchfleet
	exec 8>/var/tmp/benchfleet/.kgit.lock
	flock 8
	if [ ! -f "$KREPO/ready" ]; then
		rm -rf "$KREPO"
		mkdir -p "$KREPO"
		tar -C "$KREPO" -xf "$T" && mv "$KREPO/linux-source-6.1" "$KREPO/linux" &&
		(cd "$KREPO/linux" && git init -q && git add -A -f . &&
		 git -c user.name=bf -c user.email=bf@localhost commit -qm "linux-source-6.1 $KREPO_SHA" &&
		 git tag v6.1-deb) && touch "$KREPO/ready" || { flock -u 8; return 1; }
	fi
	flock -u 8
}

KERNEL_TINY_FRAG=(CONFIG_64BIT=y CONFIG_PRINTK=y CONFIG_TTY=y CONFIG_SERIAL_8250=y
	CONFIG_SERIAL_8250_CONSOLE=y CONFIG_UNIX98_PTYS=y CONFIG_BINFMT_ELF=y CONFIG_BINFMT_SCRIPT=y
	CONFIG_DEVTMPFS=y CONFIG_DEVTMPFS_MOUNT=y CONFIG_PROC_FS=y CONFIG_PROC_SYSCTL=y CONFIG_SYSFS=y
	CONFIG_TMPFS=y CONFIG_SHMEM=y CONFIG_BLK_DEV_INITRD=y CONFIG_RD_GZIP=y CONFIG_ACPI=y
	CONFIG_PCI=y CONFIG_VIRTIO_MENU=y CONFIG_VIRTIO_PCI=y CONFIG_BLOCK=y CONFIG_VIRTIO_BLK=y
	CONFIG_EXT4_FS=y CONFIG_NET=y CONFIG_INET=y CONFIG_UNIX=y CONFIG_PACKET=y CONFIG_NETDEVICES=y
	CONFIG_NET_CORE=y CONFIG_VIRTIO_NET=y CONFIG_FUTEX=y CONFIG_EPOLL=y CONFIG_EVENTFD=y
	CONFIG_SIGNALFD=y CONFIG_TIMERFD=y CONFIG_MULTIUSER=y CONFIG_FILE_LOCKING=y
	CONFIG_POSIX_TIMERS=y CONFIG_KEXEC=y CONFIG_IKCONFIG=y CONFIG_IKCONFIG_PROC=y
	CONFIG_TRANSPARENT_HUGEPAGE=y CONFIG_RELOCATABLE=y)

_kq() { [ -z "$1" ] && { echo NULL; return; }; printf "'%s'" "${1//\'/\'\'}"; }

# DIR: builds.tsv (one build a line, '|'-separated: key spec release config
# image modules sysmap log), artifacts.tsv (sha256 kind size), blobs/.
kernel_cache_load() {
	local dir=$1 work=$2 a_sha a_kind a_size b_key b_spec b_rel b_cfg b_img b_mod b_sys b_log n=0
	[ -f "$dir/ready" ] || return 1
	cp -p "$dir"/blobs/* "$work/artifacts/" || return 1
	while IFS=$'\t' read -r a_sha a_kind a_size; do
		bf_sql "$work" "insert into kernel_artifacts (sha256, kind, size, created_at) values
			('$a_sha', '$a_kind', $a_size, $(date +%s)) on conflict do nothing" >/dev/null
	done <"$dir/artifacts.tsv"
	# '|', not a tab: IFS whitespace would merge an empty field (no modules)
	while IFS='|' read -r b_key b_spec b_rel b_cfg b_img b_mod b_sys b_log; do
		bf_sql "$work" "insert into kernel_builds (key, state, spec, release, config_sha256,
			image_sha256, modules_sha256, sysmap_sha256, log_sha256, created_at, finished_at,
			last_used) values ($(_kq "$b_key"), 'done', $(_kq "$b_spec"), $(_kq "$b_rel"),
			$(_kq "$b_cfg"), $(_kq "$b_img"), $(_kq "$b_mod"), $(_kq "$b_sys"), $(_kq "$b_log"),
			$(date +%s), $(date +%s), $(date +%s)) on conflict do nothing" >/dev/null && n=$((n + 1))
	done <"$dir/builds.tsv"
	echo "$n"
}

kernel_cache_save() {
	local dir=$1 work=$2 row a
	rm -rf "$dir.new" && mkdir -p "$dir.new/blobs" || return 1
	bf_sql "$work" "select key, spec, release, config_sha256, image_sha256,
		coalesce(modules_sha256, ''), coalesce(sysmap_sha256, ''), coalesce(log_sha256, '')
		from kernel_builds where state = 'done' order by key" >"$dir.new/builds.tsv"
	[ -s "$dir.new/builds.tsv" ] || { rm -rf "$dir.new"; return 1; }
	while IFS='|' read -r _ _ _ b_cfg b_img b_mod b_sys b_log; do
		for a in "$b_cfg" "$b_img" "$b_mod" "$b_sys" "$b_log"; do
			[ -n "$a" ] || continue
			cp -p "$work/artifacts/$a" "$dir.new/blobs/" &&
			bf_sql "$work" "select sha256, kind, size from kernel_artifacts where sha256 = '$a'" |
				tr '|' '\t' >>"$dir.new/artifacts.tsv"
		done
	done <"$dir.new/builds.tsv"
	touch "$dir.new/ready" && rm -rf "$dir" && mv "$dir.new" "$dir"
}
