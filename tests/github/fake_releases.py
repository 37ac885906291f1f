"""The fake GitHub's git references and releases (a mixin of FakeGitHub), as the release
workflow uses them: creating a ref (``POST /git/refs``: 422
"Reference already exists"), moving one (``PATCH /git/refs/{ref}``: 422 "Update is not a
fast forward" unless forced, "Reference does not exist" when absent); releases by tag
(``GET /releases/tags/{tag}``), creating one (``POST /releases``: 422 ``already_exists``
for a tag that has one; a missing tag is made at ``target_commitish``, as GitHub does),
their assets (listed, uploaded at the release's ``upload_url``: 422 ``already_exists``
for a name taken). A ref's commit is any SHA (the fake keeps no commits); a ref moved
without ``force`` counts as not fast-forward whenever its commit changes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse


@dataclass
class FakeRelease:
    id: int
    tag: str
    name: str
    body: str
    target: str
    author: str
    assets: dict[str, bytes] = field(default_factory=dict)  # name -> the uploaded bytes


class ReleasesMixin:
    """State and routes; FakeGitHub adds `_release_routes()` to its routes."""

    def _init_releases(self) -> None:
        self.refs: dict[str, dict[str, str]] = {}  # repository -> "refs/tags/v0" -> SHA
        self.releases: dict[str, dict[str, FakeRelease]] = {}  # repository -> tag -> release
        self._release_ids = itertools.count(5000)

    # --- state helpers used by tests ---------------------------------------------
    def tags(self, full_name: str) -> dict[str, str]:
        """The repository's tags: name -> SHA."""
        return {ref.removeprefix("refs/tags/"): sha for ref, sha in
                self.refs.get(full_name, {}).items() if ref.startswith("refs/tags/")}

    def set_ref(self, full_name: str, ref: str, sha: str) -> None:
        self.repo(full_name)
        self.refs.setdefault(full_name, {})[ref] = sha

    # --- JSON shapes ---------------------------------------------------------------
    def _made_ref(self, r, ref: str) -> dict:
        """A reference made or moved through the API, in fake_refs.py's shape."""
        return self._ref_json(r, ref, self.refs[r.full_name][ref], "commit")

    def _asset_json(self, r, rel: FakeRelease, name: str) -> dict:
        url = f"{self.base}/repos/{r.full_name}/releases/assets/{rel.id}-{name}"
        return {"id": abs(hash((rel.id, name))) % 10**8, "name": name, "label": "",
                "state": "uploaded", "size": len(rel.assets[name]), "url": url,
                "content_type": "application/octet-stream", "download_count": 0,
                "browser_download_url": f"{self.base}/{r.full_name}/releases/download/"
                                        f"{rel.tag}/{name}",
                "created_at": "2026-12-01T00:00:00Z", "updated_at": "2026-12-01T00:00:00Z",
                "uploader": self._user(rel.author)}

    def _release_json(self, r, rel: FakeRelease) -> dict:
        url = f"{self.base}/repos/{r.full_name}/releases/{rel.id}"
        return {"id": rel.id, "tag_name": rel.tag, "name": rel.name, "body": rel.body,
                "target_commitish": rel.target, "draft": False, "prerelease": False,
                "url": url, "html_url": f"{self.base}/{r.full_name}/releases/tag/{rel.tag}",
                "assets_url": f"{url}/assets", "upload_url": f"{url}/assets{{?name,label}}",
                "author": self._user(rel.author), "created_at": "2026-12-01T00:00:00Z",
                "published_at": "2026-12-01T00:00:00Z",
                "assets": [self._asset_json(r, rel, n) for n in rel.assets]}

    def _invalid(self, message: str, resource: str = "", code: str = "", fld: str = ""):
        errors = [{"resource": resource, "code": code, "field": fld}] if resource else []
        return self._json({"message": message, "errors": errors, "status": "422",
                           "documentation_url": "https://docs.github.com/rest"}, 422)

    # --- routes ----------------------------------------------------------------------
    def _release_routes(self):
        # reading references (git/ref, git/matching-refs) is fake_refs.py's
        return [(r"/git/refs", self._git_refs), (r"/git/refs/(.+)", self._git_ref_update),
                (r"/releases", self._releases), (r"/releases/tags/(.+)", self._release_by_tag),
                (r"/releases/(\d+)/assets", self._assets)]

    def _git_refs(self, request, r, mm, body, token):
        ref, sha = body.get("ref", ""), body.get("sha", "")
        if request.method != "POST" or not ref.startswith("refs/") or ref.count("/") < 2 \
                or len(sha) != 40:
            return self._invalid(f"{ref} is not a valid ref name.")
        if ref in self.all_refs(r):
            return self._invalid("Reference already exists")
        self.set_ref(r.full_name, ref, sha)
        return self._json(self._made_ref(r, ref), 201)

    def _git_ref_update(self, request, r, mm, body, token):
        ref = "refs/" + mm.group(1)
        refs = self.refs.get(r.full_name, {})
        if request.method != "PATCH":
            return self._json({"message": "Not Found"}, 404)
        if ref not in refs:
            return self._invalid("Reference does not exist")
        if refs[ref] != body.get("sha") and not body.get("force"):
            return self._invalid("Update is not a fast forward")
        refs[ref] = body["sha"]
        return self._json(self._made_ref(r, ref))

    def _releases(self, request, r, mm, body, token):
        mine = self.releases.setdefault(r.full_name, {})
        if request.method != "POST":
            return self._page(request, [self._release_json(r, x) for x in mine.values()])
        tag = body.get("tag_name", "")
        if not tag:
            return self._invalid("Validation Failed", "Release", "missing_field", "tag_name")
        if tag in mine:
            return self._invalid("Validation Failed", "Release", "already_exists", "tag_name")
        target = body.get("target_commitish") or "main"
        if f"refs/tags/{tag}" not in self.refs.get(r.full_name, {}):  # GitHub makes the tag
            self.set_ref(r.full_name, f"refs/tags/{tag}", target)
        rel = FakeRelease(next(self._release_ids), tag, body.get("name") or tag,
                          body.get("body", ""), target, token.login)
        mine[tag] = rel
        return self._json(self._release_json(r, rel), 201)

    def _release_by_tag(self, request, r, mm, body, token):
        rel = self.releases.get(r.full_name, {}).get(mm.group(1))
        if rel is None:
            return self._json({"message": "Not Found"}, 404)
        return self._json(self._release_json(r, rel))

    def _assets(self, request, r, mm, body, token):
        rel = next((x for x in self.releases.get(r.full_name, {}).values()
                    if x.id == int(mm.group(1))), None)
        if rel is None:
            return self._json({"message": "Not Found"}, 404)
        if request.method != "POST":  # the upload (GitHub's uploads host, here the same one)
            return self._page(request, [self._asset_json(r, rel, n) for n in rel.assets])
        name = parse_qs(urlparse(request.url).query).get("name", [""])[0]
        if not name:
            return self._invalid("Validation Failed", "ReleaseAsset", "missing_field", "name")
        if name in rel.assets:
            return self._invalid("Validation Failed", "ReleaseAsset", "already_exists", "name")
        rel.assets[name] = request.get_data()
        return self._json(self._asset_json(r, rel, name), 201)
