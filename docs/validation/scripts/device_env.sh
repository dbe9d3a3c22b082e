# Source at the start of every device command of a run that spans calls (bash, from the
# repository root), instead of `source .whl/on-device.sh`.
#
# Each device call copies what it carries (.whl, .fg) anew, and on-device.sh reinstalls
# the wheels. A campaign left running in the background (setsid) between calls would
# import a package while it is being replaced: on 2026-12-03 two screens lost a cell
# each that way (ModuleNotFoundError inside flag_gems). So the first call installs and
# copies once, to folders no later call touches, and every call only points there:
#   /tmp/zl-site    the wheels (on-device.sh's target)
#   /tmp/zl-fg      a copy of the carried FlagGems checkout
# ZL_REINSTALL=1 forces a fresh install and copy (say, after changing zl's code).
if [[ -n "${ZL_REINSTALL:-}" || ! -d /tmp/zl-site/zl_core ]]; then
  source .whl/on-device.sh > /dev/null || return 1
  if [[ -d .fg/src/flag_gems ]]; then
    rm -rf /tmp/zl-fg.new && cp -r .fg /tmp/zl-fg.new && rm -rf /tmp/zl-fg && mv /tmp/zl-fg.new /tmp/zl-fg
  fi
fi
export PYTHONUNBUFFERED=1
export PATH="/tmp/zl-site/bin:$PATH"
if [[ -d /tmp/zl-fg/src/flag_gems ]]; then
  export FLAGGEMS_DIR=/tmp/zl-fg GEMS_VENDOR="${GEMS_VENDOR:-nvidia}"
  export PYTHONPATH="/tmp/zl-fg/src:/tmp/zl-site"
else
  export PYTHONPATH="/tmp/zl-site"
fi
echo "device env: zl $(command -v zl), FLAGGEMS_DIR=${FLAGGEMS_DIR:-unset}"
