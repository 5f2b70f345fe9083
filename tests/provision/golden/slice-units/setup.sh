# An image provisioned before with a pool of three: slot03's unit is stale and goes; a unit an
# admin wrote under a name of the same pattern stays.
mkdir -p "$ROOT/etc/systemd/system"
printf '%s\n' '# Written by slots-provision from the "slice" key of slots.conf(5); it replaces any edit.' \
	'[Unit]' 'Description=slots: slot03 of the service video-studio' '' '[Slice]' \
	>"$ROOT/etc/systemd/system/slots-video\x2dstudio-slot03.slice"
printf '[Slice]\nMemoryMax=1G\n' >"$ROOT/etc/systemd/system/slots-video\x2dstudio-extra.slice"
