import re, sys, glob, os
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
pat = re.compile(r'^\d+\s+(write|read)\((\d+), "((?:\\x[0-9a-f]{2})*)"(?:\.\.\.)?, \d+\) = (\d+)')
for f in sorted(glob.glob('st.*')):
    name = f[3:]
    n = 0
    for line in open(f):
        m = pat.match(line)
        if not m: continue
        op, fd, data, ret = m.groups()
        b = bytes(int(x, 16) for x in data.split('\\x')[1:])
        if int(ret) != 288 or len(b) != 288: continue
        mad = b[32:]
        n += 1
        kind = 'req' if op == 'write' else 'resp'
        fn = f'{out}/ibsim_{name}_{n}_{kind}.hex'
        with open(fn, 'w') as w:
            w.write(f'# Captured from ibsim 0.10 with strace: {op} of the 288-byte libumad2sim message,\n')
            w.write(f'# MAD bytes 32..287 of it (tool: see out.{name}). 256 bytes.\n')
            for i in range(0, 256, 16):
                w.write('%04x: %s\n' % (i, ' '.join('%02x' % c for c in mad[i:i+16])))
        print(fn, 'class=%02x method=%02x attr=%04x status=%04x' % (mad[1], mad[3], int.from_bytes(mad[16:18],'big'), int.from_bytes(mad[4:6],'big')))
