#!/bin/sh
# Reproducible writer env (Python 3.11, Linux x86-64, wheels only except two pure-Python sdists)
set -e
V=${1:-/tmp/writer_venv2}
python3 -m venv "$V"
"$V/bin/pip" install -q "numpy<2" mpi4py==4.1.2 mpich==5.0.2 lyncs-io==0.2.3
"$V/bin/pip" install -q --no-deps pyquda-utils==0.10.54.post0      # its dep PyQUDA needs QUDA_PATH+CUDA -> skip
# pyquda_comm (pure Python, needed by pyquda_io) ships only inside the PyQUDA sdist:
"$V/bin/pip" download -q --no-deps PyQUDA==0.10.54 -d /tmp/pyquda_sdist
SP=$("$V/bin/python" -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])')
tar xzf /tmp/pyquda_sdist/pyquda-0.10.54.tar.gz -C /tmp/pyquda_sdist
cp -r /tmp/pyquda_sdist/pyquda-0.10.54/pyquda_comm "$SP/"
"$V/bin/python" -c "import pyquda_io, pyquda_comm, lyncs_io.lime; print('writer env OK')"
