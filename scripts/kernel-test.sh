#!/usr/bin/env bash
# Run the umad transport's tests against a real Linux kernel.
#
# Boots the Debian kernel that linux-image-amd64 currently depends on under
# qemu (software emulation, no KVM needed) with an initramfs holding busybox,
# iproute2's ip and rdma, the RDMA modules, and a static Go test binary
# (CGO_ENABLED=0 go test -c -tags kerneltest ./internal/transport/umad/).
# Inside, /init (scripts/kernel/init) sets up rdma_rxe on a veth pair and
# runs the TestKernel* tests, which exercise our own umad code against the
# kernel's ib_umad: sysfs enumeration, PerfMgt agents, a Get/GetResp with a
# GRH between the two ports, the RoCE refusal of QP0, and timeouts.
#
# Usage: scripts/kernel-test.sh            (make test-kernel)
# Env:   KERNEL_TEST_WORK  cache directory (default .cache/kernel)
#        KERNEL_TEST_VERBOSE=1  stream the VM console
#        KERNEL_TEST_NO_INSTALL=1  never apt-get install
#
# Requirements: qemu-system-x86_64 and a static busybox (Debian packages
# qemu-system-x86 and busybox-static), apt-get (to download the kernel
# package), iproute2, xz, Go. When CI=true, or when run as root, missing
# qemu/busybox are installed with apt-get; otherwise the script says what to
# install and skips (exit 0, a "?" summary line), like the
# other tool-driven tests. The kernel package itself is always fetched with
# apt-get download (network to the Debian mirror, once; then cached).
# The kernel and the base initramfs are cached under the work
# directory; only the Go test binary is rebuilt on every run.
#
# Output: setup and timing lines, the go test output from the VM, and a
# last line in go test's summary form ("ok ..." or "FAIL ..."). Exit status
# 0 only if the VM printed the test binary's PASS line.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${KERNEL_TEST_WORK:-$ROOT/.cache/kernel}
PKG=github.com/ibdoctor/ibdoctor/internal/transport/umad
BASE_REV=1 # bump when the base initramfs layout changes
MODULES="ib_core ib_uverbs ib_umad udp_tunnel ip6_udp_tunnel rdma_rxe veth"
# Loaded first when they exist as modules: rdma_rxe asks the crypto layer
# for crc32 when a link is added, which modinfo does not list as a
# dependency and which fails without modprobe in the initramfs.
SOFT_MODULES="crc32_generic"

log() { echo "kernel-test: $*" >&2; }
fail() {
	log "$*"
	echo -e "FAIL\t$PKG [kernel]\t(setup)"
	exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

T0=$(now)
mkdir -p "$WORK"

# --- host tools ---------------------------------------------------------
static_busybox() {
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		# ldd fails on a static executable ("not a dynamic executable").
		if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

may_install() {
	[ "${KERNEL_TEST_NO_INSTALL:-}" != 1 ] && { [ "${CI:-}" = true ] || [ "$(id -u)" = 0 ]; }
}

APT_UPDATED=
apt_update() {
	[ -n "$APT_UPDATED" ] && return 0
	log "apt-get update"
	apt-get update -qq >&2 || return 1
	APT_UPDATED=1
}

if ! command -v qemu-system-x86_64 >/dev/null || ! static_busybox >/dev/null; then
	if may_install; then
		apt_update || fail "apt-get update failed"
		log "installing qemu-system-x86 busybox-static"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			qemu-system-x86 busybox-static >&2 || fail "apt-get install qemu-system-x86 busybox-static failed"
	elif [ "${CI:-}" = true ]; then
		fail "needs qemu-system-x86_64 and a static busybox (apt-get install qemu-system-x86 busybox-static)"
	else
		# Like the other tool-driven tests: skip when the tool is
		# missing, fail only under CI.
		log "skipping: needs qemu-system-x86_64 and a static busybox: sudo apt-get install qemu-system-x86 busybox-static (or run as root / with CI=true to install them)"
		echo -e "?   \t$PKG [kernel]\t[skipped: qemu-system-x86 or busybox-static not installed]"
		exit 0
	fi
fi
BUSYBOX=$(static_busybox) || fail "no static busybox found (apt-get install busybox-static)"
for tool in ip rdma xz dpkg-deb apt-get ldd gzip; do
	command -v "$tool" >/dev/null || fail "missing $tool (iproute2, xz-utils, dpkg, apt, libc-bin, gzip)"
done
GO=$(command -v go || echo /usr/local/go/bin/go)
[ -x "$GO" ] || fail "no Go toolchain (go in PATH or /usr/local/go/bin/go)"

# --- kernel ------------------------------------------------------------
kpkg_from_apt() {
	apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
KPKG=$(kpkg_from_apt || true)
if [ -z "$KPKG" ] && may_install; then
	apt_update && KPKG=$(kpkg_from_apt || true)
fi
if [ -z "$KPKG" ]; then
	# No package lists: fall back to the newest kernel already cached.
	KPKG=$(cd "$WORK" && ls -d linux-image-*/ 2>/dev/null | sort -V | tail -n 1 | tr -d /) || true
	[ -n "$KPKG" ] || fail "cannot resolve linux-image-amd64 (run apt-get update)"
	log "apt does not know linux-image-amd64; using cached $KPKG"
fi
KVER=${KPKG#linux-image-}
KDIR=$WORK/$KPKG

# extract_vmlinux VMLINUZ OUT: cut the compressed ELF out of a bzImage so
# qemu can boot it through its PVH entry, skipping in-guest decompression
# (about 3.5 s under emulation).
extract_vmlinux() {
	local off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$1" | head -n 1 | cut -d: -f1 || true)
	if [ -n "$off" ]; then
		(set +o pipefail; tail -c +$((off + 1)) "$1" | xz -dc --single-stream >"$2" 2>/dev/null) || true
	else
		off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$1" | head -n 1 | cut -d: -f1 || true)
		if [ -n "$off" ] && command -v zstd >/dev/null; then
			(set +o pipefail; tail -c +$((off + 1)) "$1" | zstd -dcq >"$2" 2>/dev/null) || true
		fi
	fi
	[ -s "$2" ] && [ "$(head -c 4 "$2" | od -An -c | tr -d ' ')" = '177ELF' ]
}

# modinfo_depends KO: the depends= list from the module's .modinfo strings.
modinfo_depends() {
	tr '\0' '\n' <"$1" | LC_ALL=C grep -a '^depends=' | head -n 1 | cut -d= -f2 | tr ',' ' '
}

build_kernel() {
	local tmp deb ex order name
	tmp=$(mktemp -d "$WORK/.kernel.XXXXXX")
	log "downloading $KPKG"
	(cd "$tmp" && apt-get download -o APT::Sandbox::User=root "$KPKG" >&2) || { rm -rf "$tmp"; fail "apt-get download $KPKG failed"; }
	deb=$(ls "$tmp"/*.deb)
	ex=$tmp/x
	mkdir -p "$ex" "$tmp/out/modules"
	log "extracting the kernel and the RDMA, network and crypto modules"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$ex" --wildcards \
		'./boot/vmlinuz-*' '*/modules.builtin' \
		'*/kernel/drivers/infiniband/core/*' '*/kernel/drivers/infiniband/sw/rxe/*' \
		'*/kernel/drivers/net/veth.ko*' '*/kernel/net/ipv4/*' '*/kernel/net/ipv6/*' \
		'*/kernel/crypto/*' '*/kernel/lib/*' '*/kernel/arch/x86/crypto/*'
	rm -f "$deb"
	local vmlinuz
	vmlinuz=$(ls "$ex"/boot/vmlinuz-*)
	if extract_vmlinux "$vmlinuz" "$tmp/out/vmlinux"; then
		log "booting the uncompressed vmlinux (PVH entry)"
	else
		log "could not extract vmlinux; booting the bzImage (slower)"
		rm -f "$tmp/out/vmlinux"
		cp "$vmlinuz" "$tmp/out/vmlinuz"
	fi

	# Resolve module files, decompress them, and order by dependency.
	local builtin
	builtin=$(ls "$ex"/*/modules/*/modules.builtin "$ex"/lib/modules/*/modules.builtin 2>/dev/null | head -n 1 || true)
	order=
	declare -A seen=()
	find_ko() { find "$ex" \( -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" \
		-o -name "${1//_/-}.ko" -o -name "${1//_/-}.ko.xz" -o -name "${1//_/-}.ko.zst" \) | head -n 1; }
	add() { # add NAME REQUIRED
		local n=$1 f dep
		[ -n "${seen[$n]:-}" ] && return 0
		seen[$n]=1
		f=$(find_ko "$n")
		if [ -z "$f" ]; then
			if [ -n "$builtin" ] && grep -qE "/(${n}|${n//_/-})\.ko$" "$builtin"; then
				return 0 # built into the kernel
			fi
			[ "$2" = required ] && fail "module $n not found in $KPKG (neither a module nor built in)"
			return 0
		fi
		case $f in
		*.ko.xz) xz -dc "$f" >"$tmp/out/modules/$n.ko" ;;
		*.ko.zst) command -v zstd >/dev/null || fail "$f is zstd-compressed: apt-get install zstd"
			zstd -dcq "$f" >"$tmp/out/modules/$n.ko" ;;
		*) cp "$f" "$tmp/out/modules/$n.ko" ;;
		esac
		for dep in $(modinfo_depends "$tmp/out/modules/$n.ko"); do
			add "${dep//-/_}" required
		done
		order="$order $n"
	}
	for name in $SOFT_MODULES; do add "$name" optional; done
	for name in $MODULES; do add "$name" required; done
	echo $order | tr ' ' '\n' >"$tmp/out/modules/order"
	# A concurrent run may have finished first; keep whichever landed.
	mv -T "$tmp/out" "$KDIR" 2>/dev/null || log "$KDIR appeared meanwhile; using it"
	rm -rf "$tmp"
	log "kernel $KVER cached in $KDIR ($(du -sh "$KDIR" | cut -f1)); modules: $order"
}

TK=$(now)
if [ -s "$KDIR/modules/order" ] && { [ -s "$KDIR/vmlinux" ] || [ -s "$KDIR/vmlinuz" ]; }; then
	KCACHED=cached
else
	build_kernel
	KCACHED=fresh
fi
TK_DONE=$(since "$TK")

# --- base initramfs: busybox, iproute2, libraries, modules ----------------
BASE=$WORK/base-$KVER-r$BASE_REV.cpio.gz
build_base() {
	local st f
	st=$(mktemp -d "$WORK/.base.XXXXXX")
	mkdir -p "$st"/{bin,sbin,proc,sys,dev,tmp,lib/modules}
	cp "$BUSYBOX" "$st/bin/busybox"
	for f in $("$BUSYBOX" --list); do
		case $f in busybox | ip) ;; *) ln -sf busybox "$st/bin/$f" ;; esac
	done
	cp "$(command -v ip)" "$st/sbin/ip2"
	cp "$(command -v rdma)" "$st/sbin/rdma"
	for f in $(ldd "$(command -v ip)" "$(command -v rdma)" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u); do
		mkdir -p "$st$(dirname "$f")"
		cp -L "$f" "$st$f"
	done
	cp "$KDIR"/modules/* "$st/lib/modules/"
	(cd "$st" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1 >"$BASE.tmp")
	mv "$BASE.tmp" "$BASE"
	rm -rf "$st"
}
TB=$(now)
if [ -s "$BASE" ]; then
	BCACHED=cached
else
	build_base
	BCACHED=fresh
fi
TB_DONE=$(since "$TB")

# --- per-run part: /init and the Go test binary --------------------------
TG=$(now)
RUN=$(mktemp -d "$WORK/run.XXXXXX") # per run: concurrent runs do not collide
trap 'rm -rf "$RUN"' EXIT
mkdir -p "$RUN/stage"
(cd "$ROOT" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 "$GO" test -c -tags kerneltest \
	-o "$RUN/stage/umad.test" ./internal/transport/umad/) || fail "building the test binary failed"
cp "$ROOT/scripts/kernel/init" "$RUN/stage/init"
chmod +x "$RUN/stage/init" "$RUN/stage/umad.test"
(cd "$RUN/stage" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1 >"$RUN/test.cpio.gz")
# The kernel unpacks concatenated archives in order.
cat "$BASE" "$RUN/test.cpio.gz" >"$RUN/initrd.cpio.gz"
TG_DONE=$(since "$TG")
log "kernel $KVER ($KCACHED, $TK_DONE), base initramfs ($BCACHED, $TB_DONE), test binary + initrd ($TG_DONE); setup total $(since "$T0")"

# --- boot ----------------------------------------------------------------
KERNEL=$KDIR/vmlinux
[ -s "$KERNEL" ] || KERNEL=$KDIR/vmlinuz
LOG=$RUN/console.log
TQ=$(now)
set +e
if [ "${KERNEL_TEST_VERBOSE:-}" = 1 ]; then
	timeout 180 qemu-system-x86_64 -m 512M -smp 1 -nic none -no-reboot -nographic \
		-kernel "$KERNEL" -initrd "$RUN/initrd.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet" </dev/null 2>&1 | tee "$LOG" >&2
	QRC=${PIPESTATUS[0]}
else
	timeout 180 qemu-system-x86_64 -m 512M -smp 1 -nic none -no-reboot -nographic \
		-kernel "$KERNEL" -initrd "$RUN/initrd.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet" </dev/null >"$LOG" 2>&1
	QRC=$?
fi
set -e
BOOT=$(since "$TQ")
CONSOLE=$WORK/last-console.log
tr -d '\r' <"$LOG" >"$LOG.txt"
cp "$LOG.txt" "$CONSOLE"
log "qemu (TCG) exited $QRC after $BOOT; console log: $CONSOLE"

grep '^kerneltest:' "$LOG.txt" >&2 || true
# The go test output printed inside the VM.
sed -n '/^KERNELTEST-BEGIN$/,/^KERNELTEST-EXIT: /p' "$LOG.txt" | sed '1d;$d'

VMRC=$(sed -n 's/^KERNELTEST-EXIT: \([0-9]*\)$/\1/p' "$LOG.txt" | tail -n 1)
if [ "$VMRC" = 0 ] && grep -qx 'PASS' "$LOG.txt" && grep -q -- '^--- PASS: TestKernel' "$LOG.txt" &&
	! grep -q -- '^--- \(FAIL\|SKIP\)' "$LOG.txt"; then
	echo -e "ok  \t$PKG [kernel $KVER, qemu TCG]\t$BOOT"
	exit 0
fi
log "the VM did not report PASS (exit ${VMRC:-none}); last console lines:"
tail -n 40 "$LOG.txt" >&2
echo -e "FAIL\t$PKG [kernel $KVER, qemu TCG]\t$BOOT"
exit 1
