# SPDX-License-Identifier: BSD-3-Clause
"""An example ReFrame configuration for gmb's checks (gmb_checks.py): one system, "example", with a Slurm
partition whose jobs start their ranks with srun ("cpu", Slurm's partition "debug": the one
scripts/start-local-slurm.sh makes) and the login node without a scheduler ("login"). A site copies this and names
its own systems, partitions (`access`: the sbatch options), launchers and programming environments; the checks'
references are per system:partition ("example:cpu").

    reframe -C contrib/reframe/settings.py -c contrib/reframe/gmb_checks.py --system example:cpu -r
"""

site_configuration = {
    "systems": [
        {
            "name": "example",
            "descr": "gmb's example system: a local Slurm (scripts/start-local-slurm.sh) and its login node",
            "hostnames": [".*"],
            "modules_system": "nomod",
            "partitions": [
                {
                    "name": "cpu",
                    "descr": "Slurm partition debug; ranks started by srun",
                    # squeue: job states from squeue (this Slurm keeps no accounting); with accounting, "slurm"
                    "scheduler": "squeue",
                    "launcher": "srun",
                    "access": ["--partition=debug"],
                    "environs": ["mpi"],
                    "max_jobs": 1,
                },
                {
                    "name": "login",
                    "descr": "this node, no scheduler; ranks started by each MPI library's own launcher",
                    "scheduler": "local",
                    "launcher": "local",
                    "environs": ["mpi"],
                },
            ],
        },
    ],
    "environments": [
        {"name": "mpi", "cc": "mpicc", "cxx": "mpicxx", "ftn": ""},
    ],
}
