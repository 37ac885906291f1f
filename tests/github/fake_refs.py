"""The fake GitHub's git references: branches and tags, answered from a REAL bare
repository attached to a fake repository (``FakeGitHub.attach_git``), so that what a test
pushes with git is what the API says -- a tag named like a branch included. The shapes are
GitHub's, their 404s included:

* ``GET /repos/{o}/{r}/git/ref/{heads|tags}/NAME``: one reference, exactly that name; 404
  ``Not Found`` otherwise.
* ``GET /repos/{o}/{r}/git/matching-refs/PREFIX``: every reference whose name starts with
  ``refs/PREFIX`` (a list, ``[]`` when none).
* ``GET /repos/{o}/{r}/branches/NAME``: the branch and its tip commit; 404 ``Branch not
  found`` when no branch has that name (a tag of that name is not a branch).

A repository without an attached bare repository has no references (the API's answer for
an empty repository) but those the API itself made: a reference created or moved through
``POST``/``PATCH /git/refs`` (fake_releases.py) is kept in memory and overlays the bare
repository's. Kept apart from fake_github.py's other routes (the release
endpoints live elsewhere) so that each block can change alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

DOCS = "https://docs.github.com/rest"


def refs_of(git_dir: Path | None) -> dict[str, tuple[str, str]]:
    """refname -> (object id, object type) of every branch and tag of `git_dir`."""
    if git_dir is None:
        return {}
    listed = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)",
         "refs/heads", "refs/tags"], cwd=git_dir, capture_output=True, text=True, check=True)
    refs = {}
    for line in listed.stdout.splitlines():
        name, sha, kind = line.split(" ")
        refs[name] = (sha, kind)
    return refs


class RefRoutes:
    """Mixed into FakeGitHub: `self._json`, `self.base`, `self.repos` and `self.refs` (the
    references made through the API, fake_releases.py) are its."""

    def attach_git(self, full_name: str, git_dir: Path) -> None:
        """Answer `full_name`'s references from the bare repository `git_dir`."""
        self.repo(full_name).git_dir = Path(git_dir)

    def ref_routes(self):
        return [(r"/git/ref/(.+)", self._git_ref),
                (r"/git/matching-refs/(.*)", self._matching_refs),
                (r"/branches/(.+)", self._branch)]

    def _ref_json(self, r, name: str, sha: str, kind: str) -> dict:
        api = f"{self.base}/repos/{r.full_name}"
        plural = {"commit": "commits", "tag": "tags"}.get(kind, kind + "s")
        return {"ref": name, "node_id": f"REF_{abs(hash(name)) % 10**8}",
                "url": f"{api}/git/{name}",  # GitHub's: .../git/refs/heads/NAME
                "object": {"sha": sha, "type": kind, "url": f"{api}/git/{plural}/{sha}"}}

    def all_refs(self, r) -> dict[str, tuple[str, str]]:
        """The bare repository's references, overlaid by those made through the API."""
        refs = refs_of(r.git_dir)
        refs.update({name: (sha, "commit") for name, sha in self.refs.get(r.full_name, {}).items()})
        return refs

    def _git_ref(self, request, r, mm, body, token):
        name = f"refs/{mm.group(1)}"
        found = self.all_refs(r).get(name)
        if request.method != "GET" or found is None:
            return self._json({"message": "Not Found", "status": "404",
                               "documentation_url": f"{DOCS}/git/refs#get-a-reference"}, 404)
        return self._json(self._ref_json(r, name, *found))

    def _matching_refs(self, request, r, mm, body, token):
        prefix = f"refs/{mm.group(1)}"
        return self._json([self._ref_json(r, name, *found)
                           for name, found in sorted(self.all_refs(r).items())
                           if name.startswith(prefix)])

    def _branch(self, request, r, mm, body, token):
        name = mm.group(1)
        found = self.all_refs(r).get(f"refs/heads/{name}")
        if request.method != "GET" or found is None:
            return self._json({"message": "Branch not found", "status": "404",
                               "documentation_url": f"{DOCS}/branches/branches#get-a-branch"},
                              404)
        api, sha = f"{self.base}/repos/{r.full_name}", found[0]
        return self._json({
            "name": name, "protected": False, "protection_url": f"{api}/branches/{name}/protection",
            "commit": {"sha": sha, "url": f"{api}/commits/{sha}", "commit": {"message": ""}},
            "_links": {"self": f"{api}/branches/{name}", "html": f"{self.base}/{r.full_name}"}})
