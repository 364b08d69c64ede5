"""The console's pages: server-rendered shells (Jinja2) that the shipped script (static/console.js)
fills from the JSON API and keeps live with server-sent events (/api/v1/stream/...).
No build step and no Node toolchain: the script and stylesheet are plain files in the package.
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from trafka.console import views

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def routes(broker) -> list:
    def page(name: str, title: str):
        async def render(request):
            context = {}
            params = dict(request.path_params)
            if "topic" in params and params["topic"] not in broker.logs.topics:
                raise LookupError(f"unknown topic {params['topic']!r}")
            if "partition" in params and params["partition"] >= broker.logs.topics[params["topic"]].partitions:
                raise LookupError(f"topic {params['topic']!r} has no partition {params['partition']}")
            if "group" in params and params["group"] not in views.all_groups(broker):
                raise LookupError(f"unknown group {params['group']!r}")
            if "topic" in params:
                context["partitions"] = broker.logs.topics[params["topic"]].partitions
            return templates.TemplateResponse(request, f"{name}.html", {
                "title": title.format(**params), "page": name, "params": params,
                "cluster_id": broker.cluster_id, "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}",
                "registry_url": broker.schema_registry_url, "rest_proxy_url": broker.rest_proxy_url, **context,
            })

        return render

    def base_context(request, name: str, title: str) -> dict:
        return {"title": title, "page": name, "params": dict(request.path_params), "cluster_id": broker.cluster_id,
                "bootstrap": f"{broker.advertised_host}:{broker.advertised_port}"}

    async def schemas(request):
        registry = broker.schema_registry_if_used()
        subjects = []
        if registry is not None:
            for subject in registry.subjects():
                latest = registry.version(subject, "latest")
                subjects.append({"subject": subject, "type": latest.schema_type, "versions": registry.versions(subject),
                                 "latest": latest.version, "id": latest.id, "level": registry.level(subject)})
        return templates.TemplateResponse(request, "schemas.html", {
            **base_context(request, "schemas", "schemas"), "subjects": subjects,
            "registry_url": broker.schema_registry_url,
            "global_level": registry.level(None) if registry else "BACKWARD",
            "global_mode": registry.mode(None) if registry else "READWRITE"})

    async def subject(request):
        name = request.path_params["subject"]
        registry = broker.schema_registry_if_used()
        if registry is None or name not in registry.subjects(deleted=True):
            raise LookupError(f"unknown subject {name!r}")
        versions = [registry.version(name, str(v), deleted=True) for v in registry.versions(name, deleted=True)]
        shown = [{"version": v.version, "id": v.id, "type": v.schema_type, "deleted": v.deleted,
                  "references": v.references, "pretty": views.pretty_schema(v.schema_type, v.schema)} for v in versions]
        numbers = [v["version"] for v in shown]
        diff = diff_from = diff_to = None
        if len(numbers) >= 2:
            wanted_from, wanted_to = request.query_params.get("from"), request.query_params.get("to")
            diff_from = int(wanted_from) if wanted_from and wanted_from.isdigit() and int(wanted_from) in numbers else numbers[-2]
            diff_to = int(wanted_to) if wanted_to and wanted_to.isdigit() and int(wanted_to) in numbers else numbers[-1]
            by_number = {v["version"]: v["pretty"] for v in shown}
            diff = views.schema_diff(by_number[diff_from], by_number[diff_to])
        return templates.TemplateResponse(request, "subject.html", {
            **base_context(request, "subject", f"subject {name}"), "versions": shown, "diff": diff,
            "diff_from": diff_from, "diff_to": diff_to, "level": registry.level(name), "mode": registry.mode(name)})

    part = "/topics/{topic}/partitions/{partition:int}"
    return [
        Route("/", page("overview", "trafka")),
        Route(part, page("partition", "{topic}-{partition}")),
        Route(f"{part}/records", page("records", "records of {topic}-{partition}")),
        Route("/groups/{group}", page("group", "group {group}")),
        Route("/broker", page("broker", "broker")),
        Route("/schemas", schemas),
        Route("/schemas/{subject:path}", subject),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
