# /etc/shadow a symlink into the image (a copy someone left): not followed, not replaced.
mv "$ROOT/etc/shadow" "$ROOT/etc/shadow.real"
ln -s shadow.real "$ROOT/etc/shadow"
