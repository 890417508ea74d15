#!/usr/bin/python3
"""opencv-dnn.py MODEL INPUTS OUTDIR: an opmig runtime adapter
(opmig-probe(1), `opmig migrate --verify-with`) for OpenCV's DNN module
through its Python binding (Debian's python3-opencv): read MODEL with
cv2.dnn.readNetFromONNX, bind INPUTS/input_K.npy to the names in
INPUTS/inputs.txt, run the outputs named in INPUTS/outputs.txt and write
them as OUTDIR/output_K.npy.  A model OpenCV refuses to read or run exits
1 with OpenCV's message on one line; a crash of OpenCV is a crash of this
command (the same signal).

OpenCV 4.6's Python binding turns an array of rank 3 into an image with
channels, and one of rank 0 or 1 into a matrix: such an input is given
to OpenCV with leading dims of 1 (rank 4, or 2) and reshaped back to its
shape by a Reshape node added in front of the model (a copy written with
python-onnx), so the model sees the tensor it declares.  OpenCV 4.6 has
no tensors of rank 0 (its Reshape refuses an empty shape): a scalar input
is reshaped to one element of rank 1, what a user of OpenCV gives it
instead.

Importing OpenCV takes about a second, longer than most probe cases: so
by default a server that imported it once (started on first use, gone
after 60 s without a request; its socket in $XDG_RUNTIME_DIR or the
temporary folder) forks a fresh process per run, which writes to this
command's own stdout and stderr.  OPMIG_OPENCV_SERVER=0 runs everything
in this process instead."""
import fcntl
import json
import os
import signal
import socket
import sys
import tempfile
import time
import zlib

IDLE = 60


def names(path):
    with open(path) as f:
        return [line.rstrip('\n') for line in f if line.strip()]


def blob_inputs(model, arrays, ins, tmp):
    """The model with each input of rank 0, 1 or 3 taken at rank 2 or 4
    and reshaped back (a scalar to shape [1]); the arrays reshaped to
    match."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(model)
    front, changed = [], set()
    for k, name in enumerate(ins):
        a = arrays[k]
        if a.ndim not in (0, 1, 3):
            continue
        blob = (1,) * ((2 if a.ndim < 2 else 4) - a.ndim) + a.shape
        arrays[k] = a.reshape(blob)
        changed.add(name)
        for vi in m.graph.input:
            if vi.name != name:
                continue
            vi.name = name + '__blob'
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for d in blob:
                dims.add().dim_value = d
        shape = name + '__shape'
        m.graph.initializer.append(numpy_helper.from_array(np.array(a.shape or (1,), np.int64),
                                                           shape))
        front.append(helper.make_node('Reshape', [name + '__blob', shape], [name],
                                      name=name + '__reshape'))
    nodes = front + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    path = os.path.join(tmp, 'model.blob.onnx')
    onnx.save(m, path)
    return path, changed


def work(model, inputs, outdir):
    """Run one model; the exit status."""
    import tempfile
    import numpy as np
    import cv2
    print('opmig-runtime: opencv-dnn', cv2.__version__, file=sys.stderr, flush=True)
    ins = names(os.path.join(inputs, 'inputs.txt'))
    outs = names(os.path.join(inputs, 'outputs.txt'))
    arrays = [np.load(os.path.join(inputs, 'input_%d.npy' % k)) for k in range(len(ins))]
    with tempfile.TemporaryDirectory() as tmp:
        if any(a.ndim in (0, 1, 3) for a in arrays):
            model, changed = blob_inputs(model, arrays, ins, tmp)
            ins = [n + '__blob' if n in changed else n for n in ins]
        try:
            net = cv2.dnn.readNetFromONNX(model)
            for n, a in zip(ins, arrays):
                net.setInput(a, n)
            res = net.forward(outs)
        except cv2.error as e:
            print('opencv-dnn: ' + ' '.join(str(e).split()), file=sys.stderr, flush=True)
            return 1
    os.makedirs(outdir, exist_ok=True)
    for k, r in enumerate(res):
        np.save(os.path.join(outdir, 'output_%d.npy' % k), r)
    return 0


# ---- the server ------------------------------------------------------------

def sock_path():
    """Per user and per version of this file: an edited adapter never
    talks to a server running the old code."""
    base = os.environ.get('XDG_RUNTIME_DIR') or tempfile.gettempdir()
    st = os.stat(os.path.abspath(__file__))
    key = '%s|%d|%d' % (os.path.abspath(__file__), st.st_mtime_ns, st.st_size)
    tag = '%08x' % zlib.crc32(key.encode())
    return os.path.join(base, 'opmig-opencv-dnn-%d-%s.sock' % (os.getuid(), tag))


def recv_line(conn):
    buf = b''
    while not buf.endswith(b'\n'):
        b = conn.recv(4096)
        if not b:
            break
        buf += b
    return buf


def monitor(conn, req, fds):
    """In a process of its own: run the request in a forked worker with
    the client's stdout and stderr, and tell the client how it ended; kill
    the worker when the client goes away (a timeout of the caller)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        try:
            os.chdir(req['cwd'])
            rc = work(*req['args'])
        except BaseException as e:     # report, as an uncaught error would
            print('opencv-dnn: %s: %s' % (type(e).__name__, e), file=sys.stderr)
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    for fd in fds:
        os.close(fd)
    conn.setblocking(False)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        try:
            if conn.recv(1) == b'':
                os.kill(pid, signal.SIGKILL)
        except BlockingIOError:
            pass
        except OSError:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
    reply = {'signal': os.WTERMSIG(status)} if os.WIFSIGNALED(status) else \
        {'exit': os.WEXITSTATUS(status)}
    try:
        conn.setblocking(True)
        conn.sendall(json.dumps(reply).encode() + b'\n')
    except OSError:
        pass
    os._exit(0)


def serve(path):
    import numpy  # noqa: F401  (imported once, for every worker)
    import cv2  # noqa: F401
    try:
        import onnx  # noqa: F401  (for inputs of rank 0, 1 and 3)
    except ImportError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = '%s.%d' % (path, os.getpid())
    s.bind(tmp)
    s.listen(64)
    os.rename(tmp, path)          # listening before clients can find it
    ino = os.stat(path).st_ino
    s.settimeout(IDLE)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        try:
            conn, _ = s.accept()
        except socket.timeout:
            break
        conn.settimeout(None)
        try:
            msg, fds, _, _ = socket.recv_fds(conn, 65536, 2)
            req = json.loads(msg.decode())
        except (OSError, ValueError):
            conn.close()
            continue
        if os.fork() == 0:
            s.close()
            monitor(conn, req, fds)
        for fd in fds:
            os.close(fd)
        conn.close()
    try:
        if os.stat(path).st_ino == ino:    # not a newer server's
            os.unlink(path)
    except OSError:
        pass


def start_server(path):
    """Start a server (once, under a lock) and wait for its socket."""
    with open(path + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(path)
            c.close()
            return
        except OSError:
            pass
        try:
            os.unlink(path)
        except OSError:
            pass
        if os.fork() == 0:
            lock.close()          # the server must not hold the lock
            os.setsid()
            if os.fork() == 0:
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                try:
                    serve(path)
                finally:
                    os._exit(0)
            os._exit(0)
        os.wait()
        for _ in range(600):
            if os.path.exists(path):
                return
            time.sleep(0.05)


def client(args):
    path = sock_path()
    for attempt in range(3):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(path)
            break
        except OSError:
            c.close()
            if attempt == 2:
                return None
            start_server(path)
    req = {'args': [os.path.abspath(a) for a in args], 'cwd': os.getcwd()}
    sys.stdout.flush()
    sys.stderr.flush()
    socket.send_fds(c, [json.dumps(req).encode()], [1, 2])
    line = recv_line(c)
    if not line:
        return None
    reply = json.loads(line.decode())
    if 'signal' in reply:
        signal.signal(reply['signal'], signal.SIG_DFL)
        os.kill(os.getpid(), reply['signal'])
    return reply['exit']


def main():
    if len(sys.argv) != 4:
        print('usage: opencv-dnn.py MODEL INPUTS OUTDIR', file=sys.stderr)
        return 2
    if os.environ.get('OPMIG_OPENCV_SERVER', '1') != '0':
        rc = client(sys.argv[1:])
        if rc is not None:
            return rc
    return work(*sys.argv[1:])


if __name__ == '__main__':
    sys.exit(main())
