#!/usr/bin/env perl
# SPDX-License-Identifier: GPL-2.0
# tern's upstream submissions (scripts/upstream/generate.py): the kernel series applies to
# Debian's linux-source-6.1 and builds in-tree patch by patch, checkpatch --strict clean, the
# last patch with W=1 and sparse; the rdma-core patch applies to the rdma-core source
# scripts/build-provider.sh uses and builds with rdma-core's own build. Runs
# scripts/upstream/check.sh, which prints TAP.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Spec;

my $script = File::Spec->catfile(dirname(File::Spec->rel2abs(__FILE__)), File::Spec->updir,
				 File::Spec->updir, 'scripts', 'upstream', 'check.sh');
exec('bash', $script) or die "cannot run $script: $!\n";
