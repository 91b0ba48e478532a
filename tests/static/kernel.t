#!/usr/bin/env perl
# SPDX-License-Identifier: GPL-2.0
# Static gates for the kernel code (W=1 build, sparse, checkpatch --strict): runs
# scripts/check-kernel.sh, which prints TAP.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Spec;

my $script = File::Spec->catfile(dirname(File::Spec->rel2abs(__FILE__)), File::Spec->updir,
				 File::Spec->updir, 'scripts', 'check-kernel.sh');
exec('bash', $script) or die "cannot run $script: $!\n";
